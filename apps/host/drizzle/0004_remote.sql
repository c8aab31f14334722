CREATE TABLE `remote_namespaces` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`target` text NOT NULL,
	`status` text NOT NULL,
	`opened_by_execution_id` text NOT NULL,
	`opened_at_ms` integer NOT NULL,
	`closed_by` text,
	`closed_at_ms` integer
);
--> statement-breakpoint
CREATE INDEX `remote_namespaces_session` ON `remote_namespaces` (`session_id`,`target`,`status`);--> statement-breakpoint
CREATE TABLE `remote_generations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`namespace_id` text NOT NULL,
	`generation` text NOT NULL,
	`target` text NOT NULL,
	`remote_pid` integer NOT NULL,
	`local_pid` integer NOT NULL,
	`runtime_digest` text NOT NULL,
	`runtime_copied` integer NOT NULL,
	`python` text NOT NULL,
	`started_at_ms` integer NOT NULL,
	`ended_at_ms` integer,
	`end_reason` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remote_generations_identity` ON `remote_generations` (`namespace_id`,`generation`);--> statement-breakpoint
CREATE TABLE `remote_operations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`namespace_id` text NOT NULL,
	`generation` text NOT NULL,
	`operation_id` text NOT NULL,
	`operation` text NOT NULL,
	`code` text NOT NULL,
	`execution_id` text NOT NULL,
	`status` text NOT NULL,
	`completion` text,
	`ended_by` text,
	`started_at_ms` integer NOT NULL,
	`ended_at_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remote_operations_identity` ON `remote_operations` (`namespace_id`,`operation_id`);--> statement-breakpoint
CREATE INDEX `remote_operations_status` ON `remote_operations` (`status`);
