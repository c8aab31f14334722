CREATE TABLE `hosts` (
	`host_id` text PRIMARY KEY NOT NULL,
	`address` text,
	`started_at_ms` integer NOT NULL,
	`heartbeat_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `leases` (
	`session_id` text PRIMARY KEY NOT NULL,
	`host_id` text,
	`epoch` integer NOT NULL,
	`expires_at_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `leases_host` ON `leases` (`host_id`);--> statement-breakpoint
CREATE INDEX `leases_expires` ON `leases` (`expires_at_ms`);
