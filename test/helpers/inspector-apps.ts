/**
 * Driving the MCP Inspector's Apps tab in Chromium (test/viewer/inspector-upload.test.ts): open an
 * app with arguments, and the media viewer's upload form (choose a file, tick the rights box,
 * upload, read the new ID).
 */
import type { Frame, Page } from "playwright-core";
import { expect } from "vitest";

/** A file as playwright's file chooser takes it. */
export type Picked = { name: string; mimeType: string; buffer: Buffer };

/** Opens an app of the Apps tab with `args` as JSON; the view's frame once it shows `selector`. */
export async function openApp(page: Page, title: string, args: object, selector: string): Promise<Frame> {
  await page.getByText(title, { exact: true }).first().click();
  // The same app open already: back to its input, for a fresh view.
  const back = page.getByRole("button", { name: "Back to Input" });
  if (await back.isVisible()) await back.click();
  const json = page.getByRole("switch", { name: /Edit as JSON/ });
  // With no argument, the form as it opens; otherwise the arguments typed as JSON.
  const asJson = Object.keys(args).length > 0;
  if (asJson !== (await json.isChecked())) await json.click({ force: true });
  if (asJson) {
    // The JSON editor is Ace: focus it, start editing, replace its text.
    await page.getByRole("group", { name: /Editor content/ }).click();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+A");
    await page.keyboard.insertText(JSON.stringify(args));
  }
  await page.getByRole("button", { name: "Open App" }).click();
  let view: Frame | undefined;
  await expect
    .poll(
      async () => {
        for (const f of page.frames().filter((x) => x.url() === "about:srcdoc" && !x.isDetached())) {
          if (
            (await f
              .locator(selector)
              .count()
              .catch(() => 0)) > 0
          )
            view = f;
        }
        return view !== undefined;
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return view as Frame;
}

export async function choose(page: Page, view: Frame, file: Picked): Promise<void> {
  const [chooser] = await Promise.all([
    page.waitForEvent("filechooser"),
    view.getByRole("button", { name: "Choose a file" }).click(),
  ]);
  await chooser.setFiles(file);
}

/** Chooses `file`, ticks the rights box when asked to, and presses Upload. */
export async function send(page: Page, view: Frame, file: Picked, rights = false): Promise<void> {
  await choose(page, view, file);
  if (rights) await view.getByLabel(/I have the speaker's permission/).check();
  await view.getByRole("button", { name: "Upload", exact: true }).click();
}

/** Chooses and uploads `file`; the new asset's or voice's ID, once the view shows it. */
export async function upload(page: Page, view: Frame, file: Picked, rights = false): Promise<string> {
  await send(page, view, file, rights);
  const done = view.locator(".status.uploaded");
  await done.waitFor({ timeout: 30_000 });
  return (await done.getAttribute("data-id")) ?? "";
}
