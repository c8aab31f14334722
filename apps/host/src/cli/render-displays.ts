// What a terminal shows of a cell's displays (C20): each display's text/plain, then for each image
// the model's image line and how to write it out; what did not fit the frame, and what the cell
// could not show, said on stderr.
import { frameImage, frameOmitted, shortDigest } from "@klbr/transcript";
import { plainText, type DisplayRef } from "../store/displays";

/** The lines one display prints: its text/plain, then one line per image (or per image left out). */
export function displayLines(display: DisplayRef): string[] {
  const text = plainText(display);
  const lines = text === "" ? [] : [text.endsWith("\n") ? text.slice(0, -1) : text];
  for (const image of display.images) lines.push(`${frameImage(image)} klbr display get ${shortDigest(image.digest)} -o FILE`);
  for (const [mime, bytes] of Object.entries(display.omitted ?? {})) lines.push(frameOmitted(mime, bytes));
  return lines;
}

/** Write one display: its lines on `out`. */
export function writeDisplay(display: DisplayRef, out: NodeJS.WritableStream): void {
  for (const line of displayLines(display)) out.write(`${line}\n`);
}

/** The note for displays a cell could not show (C20: 32 per cell). */
export function droppedDisplaysNote(count: number): string {
  return `klbr: ${count} more display${count === 1 ? " was" : "s were"} not shown (a cell shows at most 32)\n`;
}
