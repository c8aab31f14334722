CREATE TABLE `managed_skills` (
	`id` text PRIMARY KEY NOT NULL,
	`digest` text NOT NULL,
	`updated_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `releases` (
	`digest` text PRIMARY KEY NOT NULL,
	`manifest` text NOT NULL,
	`files` text NOT NULL,
	`created_at_ms` integer NOT NULL
);
