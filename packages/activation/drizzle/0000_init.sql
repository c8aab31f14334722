CREATE TABLE `activation_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at_ms` integer NOT NULL,
	`expected_epoch` integer NOT NULL,
	`epoch_before` integer NOT NULL,
	`epoch_after` integer NOT NULL,
	`digest` text,
	`path` text NOT NULL,
	`outcome` text NOT NULL,
	`code` text,
	`message` text,
	CONSTRAINT "activation_history_outcome" CHECK("activation_history"."outcome" in ('activated', 'refused', 'conflict'))
);
--> statement-breakpoint
CREATE INDEX `activation_history_at_ms` ON `activation_history` (`at_ms`);--> statement-breakpoint
CREATE TABLE `activation_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`epoch` integer NOT NULL,
	`digest` text,
	`path` text,
	`activated_at_ms` integer,
	CONSTRAINT "activation_state_single_row" CHECK("activation_state"."id" = 1),
	CONSTRAINT "activation_state_epoch_nonnegative" CHECK("activation_state"."epoch" >= 0)
);
