/**
 * The sandbox proxy of the test host (the reference basic-host's double-frame pattern): served
 * from an origin other than the host's, with the view's CSP as a response header, it writes the
 * view into an inner frame (which inherits that CSP) and relays messages both ways.
 */
const hostOrigin = new URL(document.referrer).origin;
document.documentElement.style.height = "100%";
document.body.style.height = "100%";
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
inner.style.cssText = "width: 100%; height: 100%; border: 0";
document.body.append(inner);

window.addEventListener("message", (event) => {
  if (event.source === window.parent) {
    if (event.origin !== hostOrigin) return;
    if (event.data?.method === "ui/notifications/sandbox-resource-ready") {
      const doc = inner.contentDocument;
      if (!doc) return;
      doc.open();
      doc.write(String(event.data.params.html));
      doc.close();
      return;
    }
    inner.contentWindow?.postMessage(event.data, "*");
  } else if (event.source === inner.contentWindow) {
    window.parent.postMessage(event.data, hostOrigin);
  }
});

window.parent.postMessage(
  { jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} },
  hostOrigin,
);
