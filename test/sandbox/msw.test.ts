/** The fetch-style handler plugs into msw: global fetch reaches the sandbox with no socket at all. */
import { http, passthrough } from "msw";
import { setupServer } from "msw/node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ModelListSchema, SubmissionSchema } from "../../src/client/schemas.js";
import { createSandbox, SANDBOX_API_KEY } from "../../src/sandbox/sandbox.js";

const BASE = "https://service.sandbox.test";
const sb = createSandbox({ now: () => 1_800_000_000_000, seed: "msw" });
const server = setupServer(
  http.all(`${BASE}/*`, ({ request }) => sb.fetch(request)),
  http.all("*", () => passthrough()),
);
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterAll(() => {
  server.close();
  return sb.close();
});

it("serves the service's endpoints to global fetch through msw, signed downloads included", async () => {
  const auth = { authorization: `Bearer ${SANDBOX_API_KEY}` };
  const models = ModelListSchema.parse(
    await (await fetch(`${BASE}/api/generate/models`, { headers: auth })).json(),
  );
  expect(models.accountingPeriod).toBe("UTC calendar month");
  const r = await fetch(`${BASE}/api/generate/image`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "idempotency-key": "msw-1" },
    body: JSON.stringify({ model: "sandbox-image-fast", prompt: "through msw" }),
  });
  const sub = SubmissionSchema.parse(await r.json());
  expect(r.status).toBe(202);
  sb.advance(3_000);
  const task = (await (
    await fetch(`${BASE}/api/generate/tasks/${sub.task.id}`, { headers: auth })
  ).json()) as {
    task: { outputs: { asset: { url: string } }[] };
  };
  const url = task.task.outputs[0]?.asset.url ?? "";
  expect(url.startsWith(BASE)).toBe(true);
  const png = await fetch(url);
  expect(png.headers.get("content-type")).toBe("image/png");
  expect((await png.arrayBuffer()).byteLength).toBeGreaterThan(100);
});
