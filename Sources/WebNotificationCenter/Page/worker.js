// The notification center's service worker: it shows the page's system notifications with their
// actions (the browser shows actions only for a worker's notifications) and handles what the person
// does with them. An action the page marked `direct` (no typed reply, no unlocked device, no app in
// front) is sent from here; everything else opens the notification in the center, which does it as
// its own buttons do.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("notificationclick", (event) => {
  const notification = event.notification;
  const data = notification.data || {};
  notification.close();
  event.waitUntil(handle(data, event.action));
});

async function handle(data, actionIdentifier) {
  const action = (data.actions || []).find((candidate) => candidate.identifier === actionIdentifier);
  if (action && action.direct) {
    const path = `/api/apps/${encodeURIComponent(data.app)}/notifications/${encodeURIComponent(data.identifier)}/respond`;
    const answer = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ kind: "action", actionIdentifier: action.identifier }),
    }).catch(() => null);
    if (answer && answer.ok) return;
  }
  const message = { app: data.app, identifier: data.identifier, action: action ? action.identifier : null };
  const pages = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const page = pages.find((client) => new URL(client.url).pathname === "/");
  if (page) {
    await page.focus().catch(() => {});
    page.postMessage(message);
    return;
  }
  const segment = (value) => encodeURIComponent(value);
  await self.clients.openWindow(action
    ? `/#${action.textInput ? "reply" : "act"}/${segment(data.app)}/${segment(data.identifier)}/${segment(action.identifier)}`
    : `/#open/${segment(data.app)}/${segment(data.identifier)}`);
}
