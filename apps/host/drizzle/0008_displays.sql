CREATE TABLE `blobs` (
	`digest` text PRIMARY KEY NOT NULL,
	`media_type` text NOT NULL,
	`bytes` integer NOT NULL,
	`data` blob NOT NULL,
	`created_at_ms` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `executions` ADD `origin` text;--> statement-breakpoint
ALTER TABLE `executions` ADD `displays` text;--> statement-breakpoint
ALTER TABLE `executions` ADD `displays_dropped` integer;