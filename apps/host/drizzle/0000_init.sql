CREATE TABLE `effects` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`kind` text NOT NULL,
	`text` text NOT NULL,
	`status` text NOT NULL,
	`event_id` integer,
	`reason` text,
	`review` text,
	`hooks_revision` text,
	`created_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `effects_identity` ON `effects` (`execution_id`,`request_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`lane` text NOT NULL,
	`direction` text NOT NULL,
	`source` text NOT NULL,
	`received_at_ms` integer NOT NULL,
	`payload` text NOT NULL,
	`attention` text,
	`consumed_at_ms` integer,
	`effect_id` text
);
--> statement-breakpoint
CREATE INDEX `events_session_pending` ON `events` (`session_id`,`direction`,`consumed_at_ms`);--> statement-breakpoint
CREATE TABLE `executions` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`generation` text NOT NULL,
	`code` text NOT NULL,
	`status` text NOT NULL,
	`output` text,
	`truncated_bytes` integer,
	`error` text,
	`ended_by` text,
	`failure` text,
	`started_at_ms` integer NOT NULL,
	`ended_at_ms` integer
);
--> statement-breakpoint
CREATE INDEX `executions_status` ON `executions` (`status`);--> statement-breakpoint
CREATE TABLE `header_records` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`type` text NOT NULL,
	`digest` text NOT NULL,
	`record` text NOT NULL,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `header_records_session` ON `header_records` (`session_id`,`id`);--> statement-breakpoint
CREATE TABLE `host_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`method` text NOT NULL,
	`request` text NOT NULL,
	`reply` text,
	`requested_at_ms` integer NOT NULL,
	`replied_at_ms` integer
);
--> statement-breakpoint
CREATE INDEX `host_requests_execution` ON `host_requests` (`execution_id`);--> statement-breakpoint
CREATE TABLE `incidents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`detail` text NOT NULL,
	`at_ms` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `kernel_resets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`generation` text NOT NULL,
	`skills_revision` text,
	`pid` integer,
	`reason` text NOT NULL,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `waits` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`reason` text NOT NULL,
	`seconds` integer,
	`deadline_ms` integer,
	`pending_input` integer NOT NULL,
	`state` text NOT NULL,
	`woken_by` text,
	`woken_at_ms` integer,
	`created_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `waits_state` ON `waits` (`state`);