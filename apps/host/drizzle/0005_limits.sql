ALTER TABLE `executions` ADD `cpu_ms` integer;--> statement-breakpoint
ALTER TABLE `executions` ADD `peak_rss_bytes` integer;
