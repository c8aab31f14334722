import { createHash, type Hash } from "node:crypto";
import { renderRecord } from "./assemble.js";
import { DriverError } from "./errors.js";
import type { ImagePart, Message } from "./messages.js";
import type { FrontierRef, TranscriptRecord } from "./records.js";
import { sharedPrefixBytes } from "./prefix.js";
import { renderFrontier } from "./render.js";
import type { Route } from "./routes.js";
import { anthropicMessages, buildRequestBody, chatImageMessage, chatMessage, responsesInput, type RequestBody } from "./wire.js";

/** One request body: the exact text to send, and the object a client serializes to that text. */
export interface AssembledBody {
  text: string;
  object: RequestBody;
  /**
   * The text prefix stability is measured on (C10): `text` itself, except that an `anthropic`
   * body's moving `cache_control` marker (on its last message) is left out. The marker says where
   * the cache ends; it is not part of the prefix.
   */
  prefixText: string;
  /** UTF-8 bytes of `text`. */
  bytes: number;
  /** SHA-256 hex of `text` (what `bodyDigest(text)` gives). */
  digest: string;
}

/** A body the assembler gave: its prefix text, that text's UTF-8 bytes, and how many parts it had. */
interface Given {
  prefixText: string;
  prefixBytes: number;
  parts: number;
}

/**
 * A neutral message as the wire items of a route's API (one message may be several Responses
 * items). A chat tool result's images are not among them: they follow its reply's results
 * (chatMessages; the assembler keeps them pending).
 */
export function wireItems(route: Route, message: Message): unknown[] {
  const opts = { images: route.images === true };
  return route.api === "chat" ? [chatMessage(message, opts)] : route.api === "responses" ? responsesInput([message], opts) : anthropicMessages([message], opts);
}

/**
 * Incremental assembly: the same bytes as `buildRequestBody(route, assembleMessages(input))`, but
 * each record is rendered and serialized once, when it is appended. A step costs what is new plus
 * one join, not a re-render of the whole transcript.
 */
export class RequestAssembler {
  private readonly head: RequestBody;
  private readonly prefix: string;
  private readonly key: "messages" | "input";
  /** Every part but the last, joined with commas (kept as it grows: no re-join per request). */
  private before = "";
  /** The last part (Anthropic marks it with a cache breakpoint in the body). */
  private lastPart: string | null = null;
  private readonly objects: unknown[] = [];
  /**
   * SHA-256 over the prefix and `before` as they grow, and their UTF-8 bytes: a body's digest
   * and size cost its last part, not a pass over the whole text each request.
   */
  private readonly hash: Hash = createHash("sha256");
  private closedBytes = 0;
  private lastBytes = 0;
  /** The latest bodies given, newest last (for the shared-prefix measure). */
  // Stryker disable next-line ArrayDeclaration: a stray first entry has no prefixText, so sharedPrefixBytes skips it, and the second body given shifts it out
  private readonly given: Given[] = [];
  private readonly calls = new Set<string>();
  private last = 0;
  /** Chat: the images of the tool results since the last other message (chatMessages' rule, one message at a time). */
  private pendingImages: ImagePart[] = [];

  constructor(
    readonly route: Route,
    header: string,
    readonly frontier: FrontierRef | null,
  ) {
    const system: Message = { role: "system", text: header };
    const anthropic = route.api === "anthropic";
    this.head = buildRequestBody(route, anthropic ? [system] : []);
    this.key = route.api === "responses" ? "input" : "messages";
    const json = JSON.stringify(this.head);
    // The messages are the body's last key and empty here: the body is this text up to "[" plus the parts.
    if (!json.endsWith(`"${this.key}":[]}`)) throw new DriverError("DRIVER_INVALID_RECORD", "the request body does not end with its messages");
    this.prefix = json.slice(0, -2);
    // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
    this.hash.update(this.prefix, "utf8");
    // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
    this.closedBytes = Buffer.byteLength(this.prefix, "utf8");
    if (!anthropic) this.push(system);
    if (frontier) this.push({ role: "user", text: renderFrontier(frontier) });
    this.last = frontier?.covers_through ?? 0;
  }

  /** The last sequence number appended (the frontier's `covers_through` before any). */
  get through(): number {
    return this.last;
  }

  /** Append records in sequence order; a record at or below `through` is refused. */
  append(records: readonly TranscriptRecord[]): void {
    for (const record of records) {
      if (record.seq <= this.last) throw new DriverError("DRIVER_INVALID_RECORD", `record ${record.seq} is not after ${this.last}`);
      this.push(renderRecord(record, this.calls));
      this.last = record.seq;
    }
  }

  /**
   * The body as it stands. Its `object` shares the assembler's message list, so it describes this
   * body only until the next `append`: send it (the client serializes it) before appending more.
   */
  body(): AssembledBody {
    // The request ends here: chat's pending images go now, as they would at the end of chatMessages.
    // (The host asks for a body only once every cell of a reply ran: no result of it comes after.)
    this.flushImages();
    // `before` stays empty until a second part arrives, so no last part means no comma either.
    const joint = this.before === "" ? "" : ",";
    const all = this.lastPart === null ? "" : `${this.before}${joint}${this.lastPart}`;
    const unmarked = `${this.prefix}${all}]}`;
    const unmarkedBytes = this.closedBytes + joint.length + this.lastBytes + 2;
    this.remember({ prefixText: unmarked, prefixBytes: unmarkedBytes, parts: this.objects.length });
    if (this.route.api !== "anthropic" || this.lastPart === null) {
      // The object shares the assembler's list (no per-request copy): it is valid until the next append.
      const digest = this.digestOf(`${joint}${this.lastPart ?? ""}]}`);
      return { text: unmarked, object: { ...this.head, [this.key]: this.objects }, prefixText: unmarked, bytes: unmarkedBytes, digest };
    }
    // Anthropic caches at marked breakpoints: the last message carries one, the ones before do not.
    const lastObject = this.objects.at(-1) as { content: Array<Record<string, unknown>> };
    const blocks = lastObject.content.slice();
    blocks[blocks.length - 1] = { ...blocks.at(-1)!, cache_control: { type: "ephemeral" } };
    const marked = { ...lastObject, content: blocks };
    const tail = `${joint}${JSON.stringify(marked)}]}`;
    const text = `${this.prefix}${this.before}${tail}`;
    // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
    const bytes = this.closedBytes + Buffer.byteLength(tail, "utf8");
    return { text, object: { ...this.head, [this.key]: [...this.objects.slice(0, -1), marked] }, prefixText: unmarked, bytes, digest: this.digestOf(tail) };
  }

  /**
   * How many leading UTF-8 bytes `previous` shares with `body`'s prefix text: exactly
   * `sharedPrefixBytes(previous, body.prefixText)`. When `previous` is the prefix text of a body
   * this assembler gave before `body` (consecutive requests of a session), it is known without
   * reading either text: the later body repeats the earlier one up to its closing `]}`, and goes
   * on with a comma or a message's `{`. Anything else is compared byte by byte.
   */
  sharedPrefixBytes(previous: string | null, body: AssembledBody): number {
    const latest = this.given.at(-1);
    // A null `previous` matches no body given: it falls through to the byte count, which is 0.
    if (latest !== undefined && latest.prefixText === body.prefixText) {
      for (let i = this.given.length - 1; i >= 0; i--) {
        const earlier = this.given[i]!;
        if (earlier.prefixText !== previous) continue;
        return earlier.parts === latest.parts ? latest.prefixBytes : earlier.prefixBytes - 2;
      }
    }
    return sharedPrefixBytes(previous, body.prefixText);
  }

  /** The digest of the prefix and `before` followed by `tail` (the running hash is copied, not finished). */
  private digestOf(tail: string): string {
    // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
    const hash = this.hash.copy().update(tail, "utf8");
    return hash.digest("hex");
  }

  private remember(given: Given): void {
    // Stryker disable next-line UnaryOperator: at(1) misses the only body kept, which is then kept twice with the same text; the next new body shifts the copy out
    const latest = this.given.at(-1);
    if (latest && latest.parts === given.parts) this.given.pop();
    this.given.push(given);
    if (this.given.length > 2) this.given.shift();
  }

  private push(message: Message): void {
    if (message.role !== "tool") this.flushImages();
    for (const item of wireItems(this.route, message)) this.pushItem(item);
    if (this.route.api === "chat" && this.route.images === true && message.role === "tool") this.pendingImages.push(...(message.images ?? []));
  }

  /** Chat: the pending tool results' images as their user message. */
  private flushImages(): void {
    if (this.pendingImages.length > 0) this.pushItem(chatImageMessage(this.pendingImages.splice(0)));
  }

  private pushItem(item: unknown): void {
    this.objects.push(item);
    if (this.lastPart !== null) {
      const comma = this.before !== "";
      const closed = comma ? `,${this.lastPart}` : this.lastPart;
      this.before += closed;
      // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
      this.hash.update(closed, "utf8");
      this.closedBytes += this.lastBytes + (comma ? 1 : 0);
    }
    this.lastPart = JSON.stringify(item);
    // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
    this.lastBytes = Buffer.byteLength(this.lastPart, "utf8");
  }
}
