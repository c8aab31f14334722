CREATE TABLE "managed_skills" (
	"id" text PRIMARY KEY NOT NULL,
	"digest" text NOT NULL,
	"updated_at_ms" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "releases" (
	"digest" text PRIMARY KEY NOT NULL,
	"manifest" json NOT NULL,
	"files" json NOT NULL,
	"created_at_ms" bigint NOT NULL
);
