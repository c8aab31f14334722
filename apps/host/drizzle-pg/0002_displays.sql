CREATE TABLE "blobs" (
	"digest" text PRIMARY KEY NOT NULL,
	"media_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"data" "bytea" NOT NULL,
	"created_at_ms" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "executions" ADD COLUMN "origin" text;--> statement-breakpoint
ALTER TABLE "executions" ADD COLUMN "displays" json;--> statement-breakpoint
ALTER TABLE "executions" ADD COLUMN "displays_dropped" bigint;