CREATE TABLE `peers` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`opener_session_id` text NOT NULL,
	`opener_execution_id` text NOT NULL,
	`mode` text NOT NULL,
	`evidence` text NOT NULL,
	`status` text NOT NULL,
	`opened_at_ms` integer NOT NULL,
	`stop_drain` integer,
	`stop_requested_at_ms` integer,
	`stopped_by` text,
	`stopped_at_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `peers_session` ON `peers` (`session_id`);--> statement-breakpoint
CREATE INDEX `peers_opener` ON `peers` (`opener_session_id`,`opened_at_ms`);--> statement-breakpoint
CREATE INDEX `peers_status` ON `peers` (`status`);--> statement-breakpoint
CREATE TABLE `peer_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`request_id` text NOT NULL,
	`peer_id` text NOT NULL,
	`from_session_id` text NOT NULL,
	`to_session_id` text NOT NULL,
	`content` text NOT NULL,
	`evidence` text NOT NULL,
	`status` text NOT NULL,
	`event_id` integer NOT NULL,
	`sent_by_execution_id` text NOT NULL,
	`sent_at_ms` integer NOT NULL,
	`result` text,
	`result_event_id` integer,
	`answered_by_execution_id` text,
	`answered_at_ms` integer,
	`cancelled_by` text,
	`cancelled_by_execution_id` text,
	`cancelled_at_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `peer_requests_identity` ON `peer_requests` (`from_session_id`,`request_id`);--> statement-breakpoint
CREATE INDEX `peer_requests_to` ON `peer_requests` (`to_session_id`,`status`);--> statement-breakpoint
CREATE INDEX `peer_requests_peer` ON `peer_requests` (`peer_id`,`status`);
