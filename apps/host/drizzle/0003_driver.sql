CREATE TABLE `transcript_records` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_id` text NOT NULL,
	`kind` text NOT NULL,
	`ref` text NOT NULL,
	`request_id` text,
	`call_id` text,
	`detail` text,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `transcript_records_session` ON `transcript_records` (`session_id`,`seq`);--> statement-breakpoint
CREATE INDEX `transcript_records_ref` ON `transcript_records` (`kind`,`ref`);--> statement-breakpoint
CREATE TABLE `model_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`route` text NOT NULL,
	`api` text NOT NULL,
	`model` text NOT NULL,
	`profile` text NOT NULL,
	`header_record_id` integer NOT NULL,
	`frontier_id` text,
	`through_seq` integer NOT NULL,
	`body_digest` text NOT NULL,
	`body_bytes` integer NOT NULL,
	`shared_prefix_bytes` integer NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`retries` integer DEFAULT 0 NOT NULL,
	`usage` text,
	`reply` text,
	`started_at_ms` integer NOT NULL,
	`ended_at_ms` integer
);
--> statement-breakpoint
CREATE INDEX `model_requests_session` ON `model_requests` (`session_id`,`started_at_ms`);--> statement-breakpoint
CREATE INDEX `model_requests_status` ON `model_requests` (`status`);--> statement-breakpoint
CREATE TABLE `frontiers` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`covers_through` integer NOT NULL,
	`block` text NOT NULL,
	`reason` text NOT NULL,
	`execution_id` text,
	`created_at_ms` integer NOT NULL,
	`installed_at_ms` integer,
	`header_record_id` integer
);
--> statement-breakpoint
CREATE INDEX `frontiers_session` ON `frontiers` (`session_id`,`created_at_ms`);
