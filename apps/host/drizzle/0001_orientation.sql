CREATE TABLE `work_items` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`purpose` text NOT NULL,
	`reason` text NOT NULL,
	`evidence_refs` text NOT NULL,
	`status` text NOT NULL,
	`outcome` text,
	`created_at_ms` integer NOT NULL,
	`closed_at_ms` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `work_items_identity` ON `work_items` (`execution_id`,`request_id`);--> statement-breakpoint
CREATE INDEX `work_items_status` ON `work_items` (`status`,`session_id`);--> statement-breakpoint
CREATE TABLE `work_item_assessments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`work_item_id` text NOT NULL,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`outcome` text NOT NULL,
	`status` text NOT NULL,
	`at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `work_item_assessments_item` ON `work_item_assessments` (`work_item_id`);--> statement-breakpoint
CREATE TABLE `orientation_candidates` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`target` text NOT NULL,
	`scope_kind` text NOT NULL,
	`scope_session_id` text,
	`text` text NOT NULL,
	`digest` text NOT NULL,
	`status` text NOT NULL,
	`staged_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `orientation_candidates_scope` ON `orientation_candidates` (`scope_kind`,`scope_session_id`,`status`);--> statement-breakpoint
CREATE TABLE `orientation_adoptions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`operation_id` text NOT NULL,
	`candidate_id` text NOT NULL,
	`target` text NOT NULL,
	`scope_kind` text NOT NULL,
	`scope_session_id` text,
	`session_id` text NOT NULL,
	`execution_id` text NOT NULL,
	`request_id` text NOT NULL,
	`step` integer NOT NULL,
	`reply` text NOT NULL,
	`adopted_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orientation_adoptions_operation` ON `orientation_adoptions` (`operation_id`);--> statement-breakpoint
CREATE INDEX `orientation_adoptions_target` ON `orientation_adoptions` (`scope_kind`,`scope_session_id`,`target`,`id`);
