// The web notification center's page: what the person sees, live over a WebSocket, and what they do,
// answered through the daemon. Everything a notification holds is shown as text, never as markup.

const SECONDS_FROM_1970_TO_2001 = 978307200;
const BANNER_SECONDS = 8;
// Between two tries of the live events, at most: a restarted center is found again within this.
const MAXIMUM_RECONNECT_SECONDS = 5;
// The close code of the live events when this browser was signed out (`WebAccess.signedOutCloseCode`).
const SIGNED_OUT_CLOSE_CODE = 4401;
// iOS shows two actions where space is short (a banner) and up to four when a notification is expanded.
const BANNER_ACTIONS = 2;
const EXPANDED_ACTIONS = 4;
// `UNNotificationActionOptions`: the actions that need the device unlocked first, and the destructive ones.
const ACTION_AUTHENTICATION_REQUIRED = 1 << 0;
const ACTION_DESTRUCTIVE = 1 << 1;
const ACTION_FOREGROUND = 1 << 2;

// `UNNotificationSetting`, `UNAlertStyle`, `UNShowPreviewsSetting` and `UNAuthorizationStatus` raw values.
const SETTING_NOT_SUPPORTED = 0;
const SETTING_DISABLED = 1;
const SETTING_ENABLED = 2;
const ALERT_STYLES = [[1, "Temporary"], [2, "Persistent"]];
const PREVIEWS = [[0, "Always"], [1, "When Unlocked"], [2, "Never"]];
const ALLOWED_STATUSES = [2, 3, 4];
// The switches iOS's Settings › Notifications › <app> shows, in its order, by setting.
const SWITCHES = [
  ["Alerts", [["lockScreenSetting", "Lock Screen"], ["notificationCenterSetting", "Notification Center"], ["alertSetting", "Banners"]]],
  ["", [["soundSetting", "Sounds"], ["badgeSetting", "Badges"], ["timeSensitiveSetting", "Time Sensitive Notifications"],
        ["scheduledDeliverySetting", "Scheduled Summary"], ["criticalAlertSetting", "Critical Alerts"],
        ["announcementSetting", "Announce Notifications"], ["carPlaySetting", "Show in CarPlay"]]],
];

const elements = {
  connection: document.getElementById("connection"),
  lock: document.getElementById("lock"),
  focus: document.getElementById("focus"),
  focusStatus: document.getElementById("focus-status"),
  focusSettings: document.getElementById("focus-settings"),
  summarySettings: document.getElementById("summary-settings"),
  lockScreen: document.getElementById("lock-screen"),
  lockTime: document.getElementById("lock-time"),
  lockDate: document.getElementById("lock-date"),
  lockList: document.getElementById("lock-list"),
  unlock: document.getElementById("unlock"),
  unlockReason: document.getElementById("unlock-reason"),
  unlockCancel: document.getElementById("unlock-cancel"),
  passcode: document.getElementById("passcode"),
  passcodeSettings: document.getElementById("passcode-settings"),
  toggleSettings: document.getElementById("toggle-settings"),
  toggleComposer: document.getElementById("toggle-composer"),
  composer: document.getElementById("composer"),
  compose: document.getElementById("compose"),
  composeApp: document.getElementById("compose-app"),
  composeKind: document.getElementById("compose-kind"),
  composeCollapse: document.getElementById("compose-collapse"),
  composeKeys: document.getElementById("compose-keys"),
  composeJSON: document.getElementById("compose-json"),
  composeProblem: document.getElementById("compose-problem"),
  composeSent: document.getElementById("compose-sent"),
  settings: document.getElementById("settings"),
  settingsApps: document.getElementById("settings-apps"),
  appSettings: document.getElementById("app-settings"),
  banners: document.getElementById("banners"),
  prompts: document.getElementById("prompts"),
  error: document.getElementById("error"),
  unpaired: document.getElementById("unpaired"),
  pairingSettings: document.getElementById("pairing-settings"),
  list: document.getElementById("list"),
  empty: document.getElementById("empty"),
};

let state = { notifications: [], prompts: [], badges: {}, device: { locked: false, hasPasscode: false, focus: null, summary: null, timeZone: undefined }, provisionalApps: [] };
// The Focus the header's button turns on: the last one the person set up, or Do Not Disturb.
let lastFocus = { name: "Do Not Disturb", allowsTimeSensitive: true, allowedApps: [] };
// What the person has opened or typed in the list, by notification, so that the list drawn again
// after an event keeps it: expanded actions, and a reply being written.
const drafts = new Map();
// The threads the person opened out of their stack, by app and thread.
const openStacks = new Set();
// Each attachment's element in the expanded list, by notification and attachment, so that drawing the
// list again neither restarts a player nor reads the file again.
const attachmentViews = new Map();
/** Each open content extension interface, by notification: `{ opened, socket }`. */
const extensionViews = new Map();
// What the person asked for on the lock screen that needs the device unlocked: done once it is.
let afterUnlock = null;
let refreshing = null;
let refreshAgain = false;
// The notification whose card takes the focus when the list is next drawn (the one after a cleared one).
let focusAfterRender = null;
// How each app is shown (its name and icon's link), by bundle identifier, as the daemon last said.
const identities = new Map();
// The device's clock less the browser's, in milliseconds: how long ago is told on the device's clock.
let deviceClockOffset = 0;
// What the page was opened for from a system or desktop notification (a notification to open, an
// action to take, a reply to write): `{ app, identifier, action }`, done once what is on screen is read.
let openedFor = requestedByFragment();
// The live events: the socket while one is open or opening, and when the next try is when none is.
let socket = null;
let reconnectTimer = null;
let reconnectDelay = 1;

/** An element with a class and text; the text is never read as markup. */
function make(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined && text !== null) element.textContent = text;
  return element;
}

function dateOf(notification) {
  return dateFromReference(notification.notification.date);
}

/** A date the daemon sent: seconds since 2001-01-01, Foundation's reference date. */
function dateFromReference(seconds) {
  return new Date((seconds + SECONDS_FROM_1970_TO_2001) * 1000);
}

/** The name the app is shown by: its display name, else its bundle identifier. */
function appName(app) {
  return identities.get(app)?.name ?? app;
}

/** The app's icon, or its name's first letter where it has none; decorative (the name is beside it). */
function appIcon(app) {
  const link = identities.get(app)?.icon;
  if (link) {
    const image = make("img", "app-icon");
    image.src = link;
    image.alt = "";
    return image;
  }
  const letter = make("span", "app-icon letter", Array.from(appName(app))[0]?.toUpperCase() ?? "?");
  letter.setAttribute("aria-hidden", "true");
  return letter;
}

/** Takes the apps' names and icons the daemon sent. */
function learnIdentities(apps) {
  for (const app of apps) identities.set(app.bundleIdentifier, app);
}

/** The device's time now, by its clock. */
function deviceNow() {
  return new Date(Date.now() + deviceClockOffset);
}

/**
 * How long ago `date` was, as iOS tells it beside a notification: "now", "5m ago", "2h ago" the same
 * day, "Yesterday", the weekday within a week, else the date.
 */
function ago(date) {
  const seconds = (deviceNow() - date) / 1000;
  if (seconds < 60) return "now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  const day = (value) => dayOf(value);
  const today = day(deviceNow());
  const then = day(date);
  if (then === today) return `${Math.floor(seconds / 3600)}h ago`;
  const yesterday = day(new Date(deviceNow() - 86400000));
  if (then === yesterday) return "Yesterday";
  const options = seconds < 7 * 86400 ? { weekday: "long" } : { month: "short", day: "numeric" };
  try {
    return date.toLocaleDateString([], { ...options, timeZone: state.device.timeZone });
  } catch (_) {
    return date.toLocaleDateString([], options);
  }
}

/** The calendar day of `date` in the device's time zone, as text to compare. */
function dayOf(date) {
  try {
    return date.toLocaleDateString("en-CA", { timeZone: state.device.timeZone });
  } catch (_) {
    return date.toLocaleDateString("en-CA");
  }
}

/** A `<time>` telling how long ago `date` was; its clock time (in the device's zone) as its title. */
function timeElement(date) {
  const time = make("time", "time", ago(date));
  time.dateTime = date.toISOString();
  time.title = timeOfDay(date);
  return time;
}

/** Tells every shown time again: "now" becomes "1m ago" as time passes. */
function retellTimes() {
  for (const time of document.querySelectorAll("time.time[datetime]")) {
    const told = ago(new Date(time.dateTime));
    if (time.textContent !== told) time.textContent = told;
  }
}

/** The time of day as the device tells it: in the daemon's time zone, which may not be the browser's. */
function timeOfDay(date) {
  try {
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", timeZone: state.device.timeZone });
  } catch (_) {
    // A zone the browser does not know (the daemon's fixed offsets): the browser's own.
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
}

function showError(message) {
  elements.error.textContent = message;
  elements.error.hidden = false;
}

function clearError() {
  elements.error.hidden = true;
  elements.error.textContent = "";
}

/**
 * Sends what the person did; a refusal is shown as the daemon worded it, under the header unless
 * `report` says where (its `problem` shows the words, its `fine` clears them). Returns the answer's
 * JSON (an empty object when it has none), or null when it was refused or could not be sent.
 */
async function send(method, path, body, report = { problem: showError, fine: clearError }) {
  try {
    const answer = await fetch(path, {
      method,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const value = await answer.json().catch(() => null);
    if (!answer.ok) {
      report.problem((value && value.detail) || `${answer.status} ${answer.statusText}`);
      return null;
    }
    report.fine();
    return value ?? {};
  } catch (error) {
    report.problem(`The notification center cannot be reached: ${error.message}`);
    return null;
  }
}

/**
 * Acts on a notification; what is on screen is read again afterwards, as a dismissal the app does not
 * hear of (no `.customDismissAction`) sends no event.
 */
async function respond(notification, body) {
  // An action chosen in an expanded notification drawn by a content extension goes to the extension first.
  const view = extensionViews.get(keyOf(notification));
  if (view && (body.kind === "action" || body.kind === "reply")) return respondThroughInterface(notification, view, body);
  const app = encodeURIComponent(notification.bundleIdentifier);
  const identifier = encodeURIComponent(notification.notification.request.identifier);
  const done = await send("POST", `/api/apps/${app}/notifications/${identifier}/respond`, body);
  if (done) refresh();
  return done;
}

/** The notification as a card: tap to open, × to dismiss, its category's actions when expanded. */
function card(notification, { inBanner }) {
  const content = notification.notification.request.content;
  const identifier = notification.notification.request.identifier;
  const article = make("article", "notification");
  article.dataset.app = notification.bundleIdentifier;
  article.dataset.identifier = identifier;
  article.dataset.key = keyOf(notification);

  const open = make("button", "open");
  open.type = "button";
  const meta = make("span", "meta");
  const from = make("span", "app");
  from.append(appIcon(notification.bundleIdentifier), make("span", "app-name", appName(notification.bundleIdentifier)));
  meta.append(from, timeElement(dateOf(notification)));
  open.append(meta);
  const row = make("span", "content-row");
  const text = make("span", "text");
  if (content.title) text.append(make("span", "title", content.title));
  if (content.subtitle) text.append(make("span", "subtitle", content.subtitle));
  if (content.body) text.append(make("span", "body", content.body));
  row.append(text);
  // The first attachment's thumbnail, unless the app hid it (`thumbnailHidden`), as iOS shows it.
  const attachments = notification.attachments || [];
  if (attachments.length > 0 && !attachments[0].thumbnailHidden) row.append(thumbnail(attachments[0]));
  open.append(row);
  open.setAttribute("aria-label", `Open: ${[appName(notification.bundleIdentifier), content.title, content.subtitle, content.body].filter(Boolean).join(", ")}`);
  open.addEventListener("click", () => whenUnlocked(`to open ${content.title || "the notification"}`,
    () => respond(notification, { kind: "open" })));
  if (notification.previewHidden) article.classList.add("preview-hidden");
  article.append(open);

  const close = make("button", "close", "×");
  close.type = "button";
  close.setAttribute("aria-label", `Dismiss ${content.title || identifier}`);
  close.addEventListener("click", () => respond(notification, { kind: "dismiss" }));
  article.append(close);
  if (inBanner) {
    // The grabber: what swiping a banner up does on iOS. The banner goes; the notification stays listed.
    const hide = make("button", "hide");
    hide.type = "button";
    hide.setAttribute("aria-label", "Hide the banner (the notification stays in the list)");
    hide.addEventListener("click", () => article.remove());
    article.append(hide);
  }

  const draft = inBanner ? null : drafts.get(keyOf(notification));
  // Expanded (in the list only): the attachments at full size, with players, and the actions; or, for a
  // category the app's content extension draws, the extension's interface instead of the attachments.
  const expanded = !inBanner && Boolean(draft && draft.expanded);
  const drawn = !inBanner && !notification.previewHidden && hasContentExtension(notification);
  const view = drawn ? extensionViews.get(keyOf(notification)) : null;
  const actions = (view && view.opened.actions) || notification.actions || [];
  const media = !inBanner && !drawn && attachments.length > 0 ? attachmentList(notification, attachments) : null;
  if (media) media.hidden = !expanded;
  const frame = drawn ? make("div", "extension") : null;
  if (frame) {
    frame.hidden = !expanded;
    if (expanded && view) showInterface(notification, view, frame, article);
  }
  let list = null;
  let shown = [];
  if (actions.length > 0) {
    shown = actions.slice(0, inBanner ? BANNER_ACTIONS : EXPANDED_ACTIONS);
    list = make("div", "actions");
    list.hidden = !inBanner && !expanded;
    for (const action of shown) list.append(actionButton(notification, action, article, inBanner));
  }
  if (list || media || frame) {
    if (!inBanner) {
      const more = make("button", "more");
      more.type = "button";
      const label = (open) => {
        more.textContent = open ? "Show Less" : list ? "Options" : "Show";
        more.setAttribute("aria-expanded", String(open));
      };
      label(expanded);
      more.addEventListener("click", async () => {
        const open = !draftOf(notification).expanded;
        draftOf(notification).expanded = open;
        for (const part of [media, list, frame]) if (part) part.hidden = !open;
        label(open);
        if (frame) {
          // The extension runs while its interface is shown, as on iOS.
          if (open) {
            if (await openInterface(notification)) render();
          } else {
            closeInterface(keyOf(notification));
            render();
          }
        }
        if (open) list?.querySelector("button")?.focus();
      });
      article.append(more);
    }
    if (frame) article.append(frame);
    if (media) article.append(media);
    if (list) article.append(list);
    const replying = draft && shown.find((action) => action.identifier === draft.replyAction && action.textInput);
    if (replying) showReply(notification, replying, article, false);
  }
  if (!inBanner && state.provisionalApps.includes(notification.bundleIdentifier)) {
    article.append(provisionalChoices(notification));
  }
  return article;
}

// MARK: Content extensions

/** Whether the notification's app has a content extension that draws its category. */
function hasContentExtension(notification) {
  const categories = (state.contentExtensions || {})[notification.bundleIdentifier] || [];
  return categories.includes(notification.notification.request.content.categoryIdentifier);
}

/**
 * Starts the app's content extension for the notification, and keeps it running while its interface
 * is shown: the interface closes (and the extension stops) when its socket does. Returns the view, or
 * null when the extension could not draw the notification (the reason is shown).
 */
async function openInterface(notification) {
  const key = keyOf(notification);
  if (extensionViews.has(key)) return extensionViews.get(key);
  const app = encodeURIComponent(notification.bundleIdentifier);
  const identifier = encodeURIComponent(notification.notification.request.identifier);
  const opened = await send("POST", `/api/apps/${app}/notifications/${identifier}/content-extension`, {});
  if (!opened) return null;
  const view = { opened, socket: new WebSocket(`ws://${location.host}/api/content-extensions/${encodeURIComponent(opened.session)}/events`) };
  view.socket.addEventListener("message", async (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    if (extensionViews.get(key) !== view) return;
    if (event.type === "changed") {
      const now = await getJSON(`/api/content-extensions/${encodeURIComponent(view.opened.session)}`).catch(() => null);
      if (now && extensionViews.get(key) === view) view.opened = now;
      render();
    } else {
      // Closed by the extension (it opened the app, or dismissed its interface) or ended.
      forgetInterface(key);
      if (drafts.get(key)) drafts.get(key).expanded = false;
      if (event.type === "ended") showError(`The content extension of ${notification.bundleIdentifier} stopped.`);
      refresh();
    }
  });
  extensionViews.set(key, view);
  return view;
}

/** Closes a notification's interface: its extension stops. */
function closeInterface(key) {
  const view = extensionViews.get(key);
  if (!view) return;
  forgetInterface(key);
  send("DELETE", `/api/content-extensions/${encodeURIComponent(view.opened.session)}`, {}, { problem: () => {}, fine: () => {} });
}

function forgetInterface(key) {
  const view = extensionViews.get(key);
  if (!view) return;
  extensionViews.delete(key);
  view.socket.close();
}

/**
 * The extension's interface in the expanded notification: its document in a frame that runs no
 * scripts and has no origin (it reaches neither the page nor its cookie), sized by the extension's
 * ratio, with its media button, its title in place of the app's name when it overrides it, and the
 * notification's own text hidden when the extension says so.
 */
function showInterface(notification, view, frame, article) {
  const { opened } = view;
  const ratio = opened.preferredContentSize
    ? opened.preferredContentSize.height / opened.preferredContentSize.width
    : opened.attributes.initialContentSizeRatio;
  const holder = make("div", "interface");
  // A frame that already shows this very document is kept: a stand-in marks its place, and keepFrames
  // moves it there once the new list is on screen. Drawing it anew would reload it (a flicker, and its
  // media would start over) each time anything on the page changes.
  let iframe = view.iframe;
  if (iframe && iframe.isConnected && iframe.dataset.frame === opened.frame) {
    const standIn = make("span", "kept-frame");
    standIn.dataset.key = keyOf(notification);
    holder.append(standIn);
  } else {
    iframe = make("iframe");
    iframe.setAttribute("sandbox", "allow-scripts");
    // Its media may play with sound once the person has used the page, as the page's own may.
    iframe.allow = "autoplay";
    iframe.src = opened.frame;
    iframe.dataset.frame = opened.frame;
    view.iframe = iframe;
    holder.append(iframe);
  }
  iframe.title = `${notification.bundleIdentifier}: ${opened.title || notification.notification.request.content.title || "notification"}`;
  iframe.style.aspectRatio = `1 / ${ratio}`;
  if (!opened.attributes.userInteractionEnabled) {
    // The interface is a picture of the notification: tapping it opens the app, as tapping the notification does.
    iframe.tabIndex = -1;
    holder.classList.add("passive");
    const tap = make("button", "tap");
    tap.type = "button";
    tap.setAttribute("aria-label", `Open ${notification.bundleIdentifier}`);
    tap.addEventListener("click", () => whenUnlocked("to open the app", () => respond(notification, { kind: "open" })));
    holder.append(tap);
  }
  if (opened.mediaButton) holder.append(mediaButton(notification, view, opened.mediaButton));
  frame.append(holder);
  if (opened.attributes.overridesDefaultTitle && opened.title) article.querySelector(".app-name").textContent = opened.title;
  if (opened.attributes.defaultContentHidden) article.querySelector(".content-row")?.classList.add("hidden-by-extension");
}

/**
 * Puts each kept content-extension frame in the place its stand-in holds in the new list, moved
 * without reloading it where the browser can (`moveBefore`).
 */
function keepFrames(container) {
  for (const standIn of container.querySelectorAll(".interface .kept-frame")) {
    const iframe = extensionViews.get(standIn.dataset.key)?.iframe;
    if (iframe) {
      try {
        standIn.parentNode.moveBefore(iframe, standIn);
      } catch (_) {
        standIn.parentNode.insertBefore(iframe, standIn);
      }
    }
    standIn.remove();
  }
}

/** The play/pause button the system draws over the extension's media, where it asked. */
function mediaButton(notification, view, button) {
  const control = make("button", button.type === 2 ? "media-button overlay" : "media-button", button.playing ? "❚❚" : "▶");
  control.type = "button";
  control.setAttribute("aria-label", button.playing ? "Pause" : "Play");
  control.setAttribute("aria-pressed", String(button.playing));
  control.style.left = `${button.frame.x}px`;
  control.style.top = `${button.frame.y}px`;
  if (button.frame.width > 0) control.style.width = `${button.frame.width}px`;
  if (button.frame.height > 0) control.style.height = `${button.frame.height}px`;
  if (button.tintColor) control.style.color = button.tintColor;
  control.addEventListener("click", async () => {
    const now = await send("POST", `/api/content-extensions/${encodeURIComponent(view.opened.session)}/media`, { play: !button.playing });
    if (now && extensionViews.get(keyOf(notification)) === view) {
      view.opened = now;
      render();
    }
  });
  return control;
}

/**
 * The person's action, handed to the content extension first: it keeps its interface (updated), or
 * closes it, and says whether the app hears of the action.
 */
async function respondThroughInterface(notification, view, body) {
  const key = keyOf(notification);
  const handled = await send("POST", `/api/content-extensions/${encodeURIComponent(view.opened.session)}/respond`, body);
  if (!handled) return false;
  if (handled.option === "doNotDismiss" && handled.interface) {
    view.opened = handled.interface;
    const draft = drafts.get(key);
    if (draft) {
      draft.replyAction = null;
      draft.text = "";
    }
    render();
  } else {
    forgetInterface(key);
    drafts.delete(key);
    refresh();
  }
  return true;
}

/**
 * The small picture beside a notification's text: the image, or the movie's frame at the attachment's
 * `thumbnailTime`, cut to its `thumbnailClippingRect`; a note for a sound; a mark for a file that is
 * missing or that the browser cannot show.
 */
function thumbnail(attachment) {
  const frame = make("span", "thumbnail");
  frame.dataset.identifier = attachment.identifier;
  const broken = (why) => {
    frame.classList.add(why);
    frame.title = why === "missing" ? `${attachment.name} is missing` : `${attachment.name} cannot be shown`;
    frame.setAttribute("aria-label", frame.title);
    frame.append(make("span", "mark", "!"));
  };
  if (!attachment.url) {
    broken("missing");
    return frame;
  }
  let view;
  if (attachment.kind === "image" && attachment.thumbnailTime > 0 && "ImageDecoder" in window) {
    // An animated image's thumbnailTime is a frame number: that frame, drawn once.
    const canvas = make("canvas");
    view = canvas;
    frameOf(attachment.url, Math.floor(attachment.thumbnailTime)).then(({ bitmap, index }) => {
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
      canvas.getContext("2d").drawImage(bitmap, 0, 0);
      canvas.dataset.frame = String(index);
    }, () => broken("invalid"));
  } else if (attachment.kind === "image") {
    view = make("img");
    view.alt = "";
    view.src = attachment.url;
  } else if (attachment.kind === "movie") {
    view = make("video");
    view.muted = true;
    view.preload = "metadata";
    view.src = attachment.thumbnailTime ? `${attachment.url}#t=${attachment.thumbnailTime}` : attachment.url;
  } else {
    frame.classList.add("audio");
    frame.setAttribute("aria-label", `Sound: ${attachment.name}`);
    frame.append(make("span", "mark", "♪"));
    return frame;
  }
  view.setAttribute("aria-hidden", "true");
  const clip = attachment.thumbnailClippingRect;
  if (clip) {
    const percent = (value) => `${Number((value * 100).toFixed(3))}%`;
    view.style.setProperty("object-view-box",
      `inset(${percent(clip.Y)} ${percent(1 - clip.X - clip.Width)} ${percent(1 - clip.Y - clip.Height)} ${percent(clip.X)})`);
  }
  // The element stays (hidden), so what was asked of the file can still be read.
  view.addEventListener("error", () => broken("invalid"), { once: true });
  frame.append(view);
  return frame;
}

// Frames of animated images already decoded, by frame and URL: the list drawn again draws them at once
// (a resolved promise's callbacks run before the page is painted) instead of fetching them again.
const decodedFrames = new Map();

/** Frame `index` of the animated image at `url` (its last, if it has fewer), as `{ bitmap, index }`. */
function frameOf(url, index) {
  const key = `${index} ${url}`;
  if (!decodedFrames.has(key)) {
    const decoding = decodeFrame(url, index);
    decoding.catch(() => decodedFrames.delete(key));
    decodedFrames.set(key, decoding);
    if (decodedFrames.size > 64) decodedFrames.delete(decodedFrames.keys().next().value);
  }
  return decodedFrames.get(key);
}

async function decodeFrame(url, index) {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`${answer.status}`);
  const decoder = new ImageDecoder({ data: answer.body, type: answer.headers.get("Content-Type") || "" });
  try {
    await decoder.tracks.ready;
    await decoder.completed;
    const shown = Math.min(index, decoder.tracks.selectedTrack.frameCount - 1);
    const { image } = await decoder.decode({ frameIndex: shown });
    try {
      return { bitmap: await createImageBitmap(image), index: shown };
    } finally {
      image.close();
    }
  } finally {
    decoder.close();
  }
}

/**
 * A notification's attachments in full, as its expanded view shows them: images, and audio and video
 * with the browser's players. A file that is missing, or that the browser cannot read or play, says so.
 */
function attachmentList(notification, attachments) {
  const section = make("div", "attachments");
  section.setAttribute("aria-label", "Attachments");
  attachments.forEach((attachment, index) => {
    const key = keyOf(notification);
    if (!attachmentViews.has(key)) attachmentViews.set(key, new Map());
    const views = attachmentViews.get(key);
    const viewKey = `${index} ${attachment.url}`;
    if (!views.has(viewKey)) views.set(viewKey, attachmentView(attachment));
    section.append(views.get(viewKey));
  });
  return section;
}

function attachmentView(attachment) {
  const figure = make("figure", "attachment");
  figure.dataset.identifier = attachment.identifier;
  figure.dataset.kind = attachment.kind;
  const caption = make("figcaption", "", attachment.name);
  const fail = (why, text) => {
    figure.classList.add(why);
    figure.replaceChildren(make("p", "attachment-problem", text), caption);
  };
  if (!attachment.url) {
    fail("missing", `${attachment.name} is missing: the file is no longer in the notification system's store.`);
    return figure;
  }
  let view;
  if (attachment.kind === "image") {
    view = make("img");
    view.alt = attachment.name;
  } else {
    view = make(attachment.kind === "movie" ? "video" : "audio");
    view.controls = true;
    view.preload = "metadata";
    if (view.canPlayType(attachment.mediaType) === "") {
      fail("invalid", `${attachment.name} (${attachment.type}) cannot be played in this browser.`);
      return figure;
    }
  }
  view.addEventListener("error", () => fail("invalid", `${attachment.name} cannot be shown: it is not a readable ${attachment.type} file.`), { once: true });
  view.src = attachment.url;
  figure.append(view, caption);
  return figure;
}

/**
 * A provisional notification asks the person to keep the app's notifications or turn them off, as
 * iOS asks: "Keep…" offers "Deliver Immediately" (quietly, in Notification Center), and "Deliver in
 * Scheduled Summary" while the summary is on; "Turn Off…" asks to confirm.
 */
function provisionalChoices(notification) {
  const app = notification.bundleIdentifier;
  const path = `/api/apps/${encodeURIComponent(app)}`;
  const panel = make("div", "provisional");
  const draft = draftOf(notification);
  const button = (title, className, onClick) => {
    const element = make("button", className, title);
    element.type = "button";
    element.addEventListener("click", onClick);
    return element;
  };
  const ask = (choice) => {
    draft.provisional = choice;
    render();
    document.querySelector(`.notification[data-key="${CSS.escape(keyOf(notification))}"] .provisional button`)?.focus();
  };
  if (draft.provisional === "keep") {
    // With the Scheduled Summary on, iOS offers to deliver the app's notifications in it.
    const summary = Boolean(state.device.summary);
    panel.append(make("p", "", summary
      ? `Deliver notifications from ${app} immediately in Notification Center, or in your Scheduled Summary, without sounds, banners or badges.`
      : `Notifications from ${app} will appear in Notification Center, without sounds, banners or badges.`));
    panel.append(button("Deliver Immediately", "keep-now", async () => {
      if (await send("POST", `${path}/keep`, {})) draft.provisional = null;
    }));
    if (summary) {
      panel.append(button("Deliver in Scheduled Summary", "keep-summary", async () => {
        if (await send("POST", `${path}/keep`, { inSummary: true })) draft.provisional = null;
      }));
    }
    panel.append(button("Cancel", "cancel", () => ask(null)));
  } else if (draft.provisional === "off") {
    panel.append(make("p", "", `Turn off all notifications from ${app}? You can turn them on again in Settings.`));
    panel.append(button("Turn Off All Notifications", "turn-off destructive", async () => {
      if (await send("POST", `${path}/authorization`, { decision: "deny" })) draft.provisional = null;
    }));
    panel.append(button("Cancel", "cancel", () => ask(null)));
  } else {
    panel.append(button("Keep…", "keep", () => ask("keep")), button("Turn Off…", "off", () => ask("off")));
  }
  return panel;
}

function keyOf(notification) {
  return `${notification.bundleIdentifier}\n${notification.notification.request.identifier}`;
}

function draftOf(notification) {
  const key = keyOf(notification);
  if (!drafts.has(key)) drafts.set(key, { expanded: false, replyAction: null, text: "", provisional: null });
  return drafts.get(key);
}

function actionButton(notification, action, article, inBanner) {
  const button = make("button", (action.options & ACTION_DESTRUCTIVE) ? "destructive" : "", action.title);
  button.type = "button";
  button.dataset.action = action.identifier;
  const choose = () => {
    if (action.textInput) {
      if (!inBanner) draftOf(notification).replyAction = action.identifier;
      showReply(notification, action, article, true);
    } else {
      respond(notification, { kind: "action", actionIdentifier: action.identifier });
    }
  };
  button.addEventListener("click", () => {
    if (action.options & (ACTION_AUTHENTICATION_REQUIRED | ACTION_FOREGROUND)) {
      whenUnlocked(`to choose “${action.title}”`, choose);
    } else {
      choose();
    }
  });
  return button;
}

/**
 * Does `perform` now, or, when the device is locked, once the person unlocks it: an action that
 * needs authentication or opens the app asks for the passcode first, as iOS asks. `purpose` says
 * what for ("to choose “Done”").
 */
function whenUnlocked(purpose, perform) {
  if (!state.device.locked) return perform();
  afterUnlock = perform;
  elements.unlockReason.textContent = `${state.device.hasPasscode ? "Enter your passcode" : "Unlock"} ${purpose}.`;
  elements.unlockCancel.hidden = false;
  (state.device.hasPasscode ? elements.passcode : elements.unlock.querySelector("button[type=submit]")).focus();
}

function forgetAfterUnlock() {
  afterUnlock = null;
  elements.unlockReason.textContent = "";
  elements.unlockCancel.hidden = true;
}

elements.unlock.addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = state.device.hasPasscode ? { passcode: elements.passcode.value } : {};
  elements.passcode.value = "";
  // Taken before the unlock is asked for: the page may hear that the device unlocked (and draw the
  // list, which forgets what waited for an unlock) before the answer to this request arrives.
  const perform = afterUnlock;
  if (!(await send("POST", "/api/device/unlock", body))) {
    elements.passcode.focus();
    return;
  }
  forgetAfterUnlock();
  state.device.locked = false;
  render();
  if (perform) await perform();
});
elements.unlockCancel.addEventListener("click", forgetAfterUnlock);
elements.lock.addEventListener("click", () => send("POST", "/api/device/lock", {}));

/** A text-input action: the field with its placeholder and its button's title. */
function showReply(notification, action, article, focus) {
  let form = article.querySelector("form.reply");
  if (!form) {
    form = make("form", "reply");
    const input = make("input");
    input.type = "text";
    input.name = "reply";
    input.placeholder = action.textInput.placeholder;
    input.setAttribute("aria-label", action.title);
    const draft = drafts.get(keyOf(notification));
    if (draft && draft.replyAction === action.identifier) {
      input.value = draft.text;
      input.addEventListener("input", () => { draft.text = input.value; });
    }
    const send = make("button", "", action.textInput.buttonTitle || "Send");
    send.type = "submit";
    form.append(input, send);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      respond(notification, { kind: "reply", actionIdentifier: action.identifier, text: input.value });
    });
    article.append(form);
  }
  if (focus) form.querySelector("input").focus();
}

/** A banner for a notification just presented, with its sound where the settings and the browser allow one. */
function showBanner(notification, { silent = false } = {}) {
  const banner = card(notification, { inBanner: true });
  banner.classList.add("banner");
  putUp(banner);
  // Its sound, as the app's settings allow, unless the system notification plays it.
  if (notification.presentation.sound && !silent) playSound();
}

/**
 * A banner for the Scheduled Summary of `date` that just came: how many notifications from which apps,
 * and the most relevant ones' titles; opening it opens the summary in the list.
 */
function showSummaryBanner(date) {
  const notifications = byRelevance(state.notifications.filter((notification) =>
    notification.summary && !notification.summary.held && notification.summary.date === date));
  if (notifications.length === 0) return;
  const banner = make("article", "notification banner summary-banner");
  banner.dataset.date = String(date);
  const open = make("button", "open");
  open.type = "button";
  const meta = make("span", "meta");
  meta.append(make("span", "app-name", "Scheduled Summary"), make("time", "time", timeOfDay(dateFromReference(date))));
  const text = make("span", "text");
  text.append(make("span", "title", "Your Scheduled Summary"), make("span", "subtitle", countFromApps(notifications)));
  const titles = notifications.slice(0, 2).map((notification) => notification.notification.request.content.title).filter(Boolean);
  if (titles.length > 0 && !notifications.some((notification) => notification.previewHidden)) text.append(make("span", "body", titles.join(" · ")));
  const row = make("span", "content-row");
  row.append(text);
  open.append(meta, row);
  open.setAttribute("aria-label", `Open the Scheduled Summary: ${countFromApps(notifications)}`);
  open.addEventListener("click", () => {
    banner.remove();
    openStacks.add(`summary\n${date}`);
    render();
    const digest = elements.list.querySelector(`.digest[data-date="${CSS.escape(String(date))}"]`);
    digest?.scrollIntoView({ block: "start" });
    digest?.querySelector(".stack")?.focus();
  });
  const hide = make("button", "hide");
  hide.type = "button";
  hide.setAttribute("aria-label", "Hide the banner (the summary stays in the list)");
  hide.addEventListener("click", () => banner.remove());
  banner.append(open, hide);
  putUp(banner);
}

/**
 * Puts a banner up; it leaves the screen by itself unless in use. One at a time, as on iOS: it takes
 * the place of the banner before it (which stays in the list), unless the person is working in that
 * one (a reply being typed, a button focused). Pointing at a banner only keeps it from leaving by itself.
 */
function putUp(banner) {
  const focused = (element) => element.contains(document.activeElement);
  const inUse = (element) => element.matches(":hover") || focused(element);
  for (const older of [...elements.banners.children]) if (!focused(older)) older.remove();
  banner.dataset.shownAt = String(performance.now());
  elements.banners.prepend(banner);
  let remaining = BANNER_SECONDS;
  const timer = setInterval(() => {
    if (!banner.isConnected) return clearInterval(timer);
    if (inUse(banner)) return;
    remaining -= 1;
    if (remaining <= 0) {
      clearInterval(timer);
      banner.remove();
    }
  }, 1000);
}

// The page's sound: browsers let a page play only after the person's first gesture on it, so the
// first click or key press (any) makes it ready, and it then plays in the background too.
let audio = null;
function readyAudio() {
  try {
    audio ??= new AudioContext();
    if (audio.state !== "running") audio.resume();
  } catch (_) {
    // No Web Audio: notifications come without the page's tone.
  }
}
document.addEventListener("pointerdown", readyAudio, { capture: true });
document.addEventListener("keydown", readyAudio, { capture: true });

/** A short tone, where the browser lets the page play one. */
function playSound() {
  try {
    if (!audio) return;
    const context = audio;
    const tone = context.createOscillator();
    const volume = context.createGain();
    tone.frequency.value = 880;
    volume.gain.setValueAtTime(0.15, context.currentTime);
    volume.gain.exponentialRampToValueAtTime(0.001, context.currentTime + 0.3);
    tone.connect(volume).connect(context.destination);
    tone.start();
    tone.stop(context.currentTime + 0.3);
  } catch (_) {
    // No sound without the person's first gesture: the notification is still shown.
  }
}

function renderPrompts() {
  elements.prompts.replaceChildren();
  for (const prompt of state.prompts) {
    const section = make("section", "prompt");
    section.dataset.app = prompt.bundleIdentifier;
    section.setAttribute("role", "alertdialog");
    const heading = make("h2", "", `“${appName(prompt.bundleIdentifier)}” Would Like to Send You Notifications`);
    heading.id = `prompt-${prompt.bundleIdentifier}`;
    section.setAttribute("aria-labelledby", heading.id);
    section.append(heading);
    section.append(make("p", "", "Notifications may include alerts, sounds and icon badges."));
    const choices = make("div", "choices");
    const deny = make("button", "deny", "Don’t Allow");
    const allow = make("button", "allow", "Allow");
    for (const [button, decision] of [[deny, "deny"], [allow, "grant"]]) {
      button.type = "button";
      button.addEventListener("click", () => send("POST", `/api/apps/${encodeURIComponent(prompt.bundleIdentifier)}/authorization`, { decision }));
      choices.append(button);
    }
    section.append(choices);
    elements.prompts.append(section);
  }
}

/** What is on screen: the lock screen while the device is locked, otherwise the list (or Settings). */
function render() {
  const locked = state.device.locked;
  elements.lockScreen.hidden = !locked;
  elements.lock.hidden = locked;
  elements.toggleSettings.hidden = locked;
  elements.toggleComposer.hidden = locked;
  elements.prompts.hidden = locked;
  elements.passcode.hidden = !state.device.hasPasscode;
  renderFocus();
  // Only one of the two lists is drawn; the other is emptied.
  (locked ? elements.list : elements.lockList).replaceChildren();
  if (locked) {
    elements.settings.hidden = true;
    elements.composer.hidden = true;
    elements.list.hidden = true;
    elements.banners.replaceChildren();
    showTime();
  } else {
    forgetAfterUnlock();
    elements.list.hidden = !elements.settings.hidden || !elements.composer.hidden;
  }
  renderPrompts();
  // On the lock screen, what the daemon says the app's Lock Screen setting lets it show (what the list keeps,
  // wherever the app was when it came); in the list, what the settings keep in Notification Center.
  // What waits for the Scheduled Summary is not seen before it comes, unless the person asked to see the next one.
  const early = !locked && Boolean(state.device.summary?.showsNextSummary);
  renderList(locked ? elements.lockList : elements.list, state.notifications.filter((notification) =>
    notification.summary?.held ? early : locked ? notification.onLockScreen : notification.presentation.list));
}

/** The header's Focus button and the line that says which Focus is on. */
function renderFocus() {
  const focus = state.device.focus;
  if (focus) lastFocus = focus;
  elements.focus.setAttribute("aria-pressed", String(Boolean(focus)));
  elements.focus.textContent = focus ? `☾ ${focus.name}` : "Focus";
  elements.focusStatus.hidden = !focus;
  elements.focusStatus.textContent = focus ? focusSummary(focus) : "";
}

/** What a Focus lets through, in words. */
function focusSummary(focus) {
  const through = ["critical", ...(focus.allowsTimeSensitive ? ["time-sensitive"] : [])].join(" and ");
  const apps = focus.allowedApps.length > 0 ? `, and everything from ${new Intl.ListFormat("en").format(focus.allowedApps.map(appName))}` : "";
  return `${focus.name} is on: notifications arrive silenced, but for ${through} ones${apps}.`;
}

async function setFocus(focus) {
  const answer = await send("PUT", "/api/device/focus", { focus });
  if (!answer) return null;
  state.device.focus = answer.focus;
  renderFocus();
  return answer;
}

elements.focus.addEventListener("click", () => setFocus(state.device.focus ? null : lastFocus));

function showTime() {
  const now = new Date();
  elements.lockTime.textContent = timeOfDay(now);
  const day = { weekday: "long", month: "long", day: "numeric" };
  try {
    elements.lockDate.textContent = now.toLocaleDateString([], { ...day, timeZone: state.device.timeZone });
  } catch (_) {
    elements.lockDate.textContent = now.toLocaleDateString([], day);
  }
}
setInterval(() => { if (state.device.locked) showTime(); }, 15000);

/**
 * A thread's stack, under its newest notification: `categorySummaryFormat` with `%u` the number of the
 * others (each counted `summaryArgumentCount` times) and `%@` their summary arguments, as iOS 12 words it.
 */
function stackSummary(newest, others) {
  const count = others.reduce((sum, notification) => sum + Math.max(1, notification.notification.request.content.summaryArgumentCount ?? 1), 0);
  const names = [...new Set(others.map((notification) => notification.notification.request.content.summaryArgument).filter(Boolean))];
  const joined = new Intl.ListFormat("en", { type: "conjunction" }).format(names);
  let format = newest.categorySummaryFormat;
  if (!format || (format.includes("%@") && names.length === 0)) {
    format = `%u more notification${count === 1 ? "" : "s"}${names.length > 0 ? " from %@" : ""}`;
  }
  return format.replaceAll("%u", String(count)).replaceAll("%@", joined);
}

/**
 * A list of notifications: the Scheduled Summaries that came (newest first), what waits for the next one
 * (when the person shows it early), then the rest by app (the app with the newest notification first),
 * then by thread, newest first.
 */
function renderList(container, shown) {
  // Drafts of notifications no longer shown go; the field being typed in keeps its focus and caret.
  const present = new Set(shown.map(keyOf));
  for (const key of drafts.keys()) if (!present.has(key)) drafts.delete(key);
  for (const key of attachmentViews.keys()) if (!present.has(key)) attachmentViews.delete(key);
  const active = document.activeElement;
  const typing = active && active.name === "reply" && container.contains(active)
    ? { key: active.closest(".notification").dataset.key, start: active.selectionStart, end: active.selectionEnd }
    : null;
  // A notification the keys are on keeps the focus when the list is drawn again (or the next one
  // takes it, when it was cleared).
  const onCard = active && active.matches("button.open") && container.contains(active) ? active.closest(".notification").dataset.key : null;
  // What is on screen goes once the new list is in place, so that a kept frame moves straight into it.
  const previous = [...container.childNodes];
  container.dataset.renders = String(Number(container.dataset.renders || "0") + 1);
  if (shown.length === 0) {
    container.replaceChildren();
    if (container === elements.list) container.append(elements.empty);
    return;
  }
  const summaries = new Map();
  const upcoming = [];
  const rest = [];
  for (const notification of shown) {
    const summary = notification.summary;
    if (!summary) rest.push(notification);
    else if (summary.held) upcoming.push(notification);
    else {
      if (!summaries.has(summary.date)) summaries.set(summary.date, []);
      summaries.get(summary.date).push(notification);
    }
  }
  for (const [date, notifications] of [...summaries].sort((a, b) => b[0] - a[0])) {
    container.append(digest(container, notifications, { date, upcoming: false }));
  }
  if (upcoming.length > 0) container.append(digest(container, upcoming, { date: upcoming[0].summary.date, upcoming: true }));
  for (const [app, threads] of byApp(rest)) container.append(appGroup(container, app, threads, ""));
  keepFrames(container);
  for (const node of previous) node.remove();
  const refocus = focusAfterRender ?? onCard;
  if (refocus) {
    const article = [...container.querySelectorAll(".notification")].find((candidate) => candidate.dataset.key === refocus);
    if (article) {
      article.querySelector("button.open")?.focus();
      focusAfterRender = null;
    }
  }
  if (typing) {
    for (const article of container.querySelectorAll(".notification")) {
      if (article.dataset.key !== typing.key) continue;
      const input = article.querySelector("form.reply input");
      if (input) {
        input.focus();
        input.setSelectionRange(typing.start, typing.end);
      }
    }
  }
}

/** Notifications by app, then by thread, in the order given. */
function byApp(notifications) {
  const apps = new Map();
  for (const notification of notifications) {
    const app = notification.bundleIdentifier;
    if (!apps.has(app)) apps.set(app, new Map());
    const thread = notification.notification.request.content.threadIdentifier || "";
    const threads = apps.get(app);
    if (!threads.has(thread)) threads.set(thread, []);
    threads.get(thread).push(notification);
  }
  return apps;
}

/** The most relevant first (`relevanceScore`), then the newest: what a summary puts on top. */
function byRelevance(notifications) {
  return [...notifications].sort((a, b) =>
    (b.notification.request.content.relevanceScore ?? 0) - (a.notification.request.content.relevanceScore ?? 0) || dateOf(b) - dateOf(a));
}

/** How many notifications, from which apps: "3 notifications from news and shop". */
function countFromApps(notifications) {
  const apps = [...new Set(notifications.map((notification) => appName(notification.bundleIdentifier)))];
  return `${notifications.length} notification${notifications.length === 1 ? "" : "s"} from ${new Intl.ListFormat("en").format(apps)}`;
}

/**
 * A Scheduled Summary as iOS shows it: its most relevant notifications on top, and the others, by app,
 * behind a button that opens it; "Clear" dismisses them all. `upcoming` is the next summary, shown early.
 */
function digest(container, notifications, { date, upcoming }) {
  const section = make("section", upcoming ? "digest upcoming" : "digest");
  section.dataset.date = String(date);
  const when = timeOfDay(dateFromReference(date));
  const title = make("h2", "", upcoming ? `Next Summary · ${when}` : `Scheduled Summary · ${when}`);
  title.id = `digest-${upcoming ? "next" : date}`;
  section.setAttribute("aria-labelledby", title.id);
  const header = make("div", "group-header");
  header.append(title);
  const clear = make("button", "clear", "Clear");
  clear.type = "button";
  clear.setAttribute("aria-label", `Clear every notification of the ${upcoming ? "next summary" : "summary"}`);
  clear.addEventListener("click", async () => {
    for (const notification of notifications) await respond(notification, { kind: "dismiss" });
  });
  header.append(clear);
  section.append(header, make("p", "digest-count", countFromApps(notifications)));
  const key = `summary\n${upcoming ? "next" : date}`;
  const open = openStacks.has(key);
  const ranked = byRelevance(notifications);
  const featured = open ? [] : ranked.slice(0, 2);
  for (const notification of featured) section.append(card(notification, { inBanner: false }));
  if (open) {
    for (const [app, threads] of byApp(notifications)) section.append(appGroup(container, app, threads, `${key}\n`));
  }
  if (open || ranked.length > featured.length) {
    const others = ranked.length - featured.length;
    const toggle = make("button", "stack", open ? "Show Less" : `${others} more in this summary`);
    toggle.type = "button";
    toggle.dataset.key = key;
    toggle.setAttribute("aria-expanded", String(open));
    toggle.addEventListener("click", () => {
      if (open) openStacks.delete(key);
      else openStacks.add(key);
      render();
      container.querySelector(`.stack[data-key="${CSS.escape(key)}"]`)?.focus();
    });
    section.append(toggle);
  }
  return section;
}

/**
 * One app's notifications: its name, its badge, "Clear", and its threads, each a stack when it has
 * several. `scope` keeps apart the same app's group in a summary and in the list.
 */
function appGroup(container, app, threads, scope) {
  const group = make("section", "group");
  group.dataset.app = app;
  const header = make("div", "group-header");
  const title = make("h2", "", appName(app));
  header.append(appIcon(app));
  title.id = `group-${container.id}-${scope}${app}`.replaceAll("\n", "-");
  group.setAttribute("aria-labelledby", title.id);
  header.append(title);
  const badge = state.badges[app] || 0;
  if (badge > 0) {
    const count = make("span", "badge", String(badge));
    count.setAttribute("aria-label", `${badge} on the app's icon`);
    header.append(count);
  }
  const clear = make("button", "clear", "Clear");
  clear.type = "button";
  clear.setAttribute("aria-label", `Clear every notification of ${app}`);
  const everyOne = [...threads.values()].flat();
  clear.addEventListener("click", async () => {
    for (const notification of everyOne) await respond(notification, { kind: "dismiss" });
  });
  header.append(clear);
  group.append(header);
  for (const [threadIdentifier, notifications] of threads) {
    // A thread of several is a stack: its newest on top, and a summary of the others that opens it.
    const thread = make("div", "thread");
    const stackKey = `${scope}${app}\n${threadIdentifier}`;
    const open = notifications.length === 1 || openStacks.has(stackKey);
    for (const notification of open ? notifications : notifications.slice(0, 1)) thread.append(card(notification, { inBanner: false }));
    if (notifications.length > 1) {
      const summary = make("button", "stack", open ? "Show Less" : stackSummary(notifications[0], notifications.slice(1)));
      summary.type = "button";
      summary.setAttribute("aria-expanded", String(open));
      summary.addEventListener("click", () => {
        if (open) openStacks.delete(stackKey);
        else openStacks.add(stackKey);
        render();
        container.querySelector(`.stack[data-key="${CSS.escape(stackKey)}"]`)?.focus();
      });
      summary.dataset.key = stackKey;
      thread.append(summary);
    }
    group.append(thread);
  }
  return group;
}

// MARK: The person reached in the background

// The worker that shows system notifications with their actions (the browser shows actions only for a worker's).
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/worker.js").catch(() => {});
  // What the person did with a system notification that the center does itself.
  navigator.serviceWorker.addEventListener("message", (event) => {
    if (document.body.dataset.unpaired === "true") return;
    openedFor = event.data;
    refresh();
  });
}
const SYSTEM_NOTIFICATIONS_KEY = "unotify-system-notifications";
// The notifications presented while the tab was in the background, not seen yet.
const unseen = new Set();

/** Whether the person turned system notifications on here, and the browser allows them. */
function systemNotificationsOn() {
  return "Notification" in window && Notification.permission === "granted" && localStorage.getItem(SYSTEM_NOTIFICATIONS_KEY) === "on";
}

/**
 * Shows `notification` as a system notification, with the actions the browser can show (a typed
 * reply as "Reply…", which opens the center); returns whether it was shown.
 */
function showSystemNotification(notification) {
  if (!systemNotificationsOn()) return false;
  const content = notification.notification.request.content;
  const app = notification.bundleIdentifier;
  const shown = notification.previewHidden ? [] : notification.actions;
  const options = {
    body: [content.subtitle, content.body].filter(Boolean).join("\n"),
    tag: keyOf(notification),
    icon: identities.get(app)?.icon ?? "/icon.svg",
    silent: !notification.presentation.sound,
    timestamp: dateOf(notification).getTime(),
    data: {
      app, identifier: notification.notification.request.identifier,
      // What the worker may do itself (an action that needs no typed reply, no unlocked device and no
      // app in front), and what it leaves to the page.
      actions: shown.map((action) => ({
        identifier: action.identifier, textInput: Boolean(action.textInput),
        direct: !action.textInput && !(action.options & (ACTION_AUTHENTICATION_REQUIRED | ACTION_FOREGROUND)),
      })),
    },
  };
  const title = content.title || appName(app);
  if ("serviceWorker" in navigator) {
    options.actions = shown.slice(0, Notification.maxActions ?? 2)
      .map((action) => ({ action: action.identifier, title: action.textInput ? `${action.title}…` : action.title }));
    // The worker as registered now (it may have been installed since the page started).
    navigator.serviceWorker.getRegistration("/")
      .then((registration) => registration?.active ? registration.showNotification(title, options) : new Notification(title, options))
      .catch(() => {});
  } else {
    const plain = new Notification(title, options);
    plain.onclick = () => {
      window.focus();
      openedFor = { app, identifier: options.data.identifier, action: null };
      refresh();
    };
  }
  return true;
}

function markUnseen(notification) {
  unseen.add(keyOf(notification));
  showUnseen();
}

/** The unseen count in the tab's title and on its icon. */
function showUnseen() {
  const count = unseen.size;
  document.title = count > 0 ? `(${count}) Notification Center` : "Notification Center";
  const icon = document.getElementById("favicon");
  if (count === 0) return icon.setAttribute("href", "/icon.svg");
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const context = canvas.getContext("2d");
  context.fillStyle = "#ff3b30";
  context.beginPath();
  context.arc(32, 32, 32, 0, Math.PI * 2);
  context.fill();
  context.fillStyle = "#ffffff";
  context.font = "bold 40px sans-serif";
  context.textAlign = "center";
  context.textBaseline = "middle";
  context.fillText(count > 99 ? "99" : String(count), 32, 35);
  icon.setAttribute("href", canvas.toDataURL("image/png"));
}

/** What left the list leaves the unseen count and the system's notifications too. */
function forgetWhatLeft() {
  const present = new Set(state.notifications.map(keyOf));
  let changed = false;
  for (const key of [...unseen]) if (!present.has(key)) changed = unseen.delete(key) || changed;
  if (changed) showUnseen();
  systemNotifications().then((shown) => {
    for (const notification of shown) if (!present.has(notification.tag)) notification.close();
  });
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible") return;
  // Seen: the count goes, and so do the system's copies of what is now on screen.
  unseen.clear();
  showUnseen();
  systemNotifications().then((shown) => shown.forEach((notification) => notification.close()));
});

/** The system notifications the worker shows now (none where there is no worker). */
async function systemNotifications() {
  try {
    const registration = "serviceWorker" in navigator ? await navigator.serviceWorker.getRegistration("/") : null;
    return registration ? await registration.getNotifications() : [];
  } catch (_) {
    return [];
  }
}

/**
 * What the address's fragment asks for: `#open/<app>/<identifier>`, or `#reply/…/<action>` and
 * `#act/…/<action>` (a typed reply, another action); null for none.
 */
function requestedByFragment() {
  const match = /^#(reply|act|open)\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(location.hash);
  if (!match) return null;
  try {
    return { app: decodeURIComponent(match[2]), identifier: decodeURIComponent(match[3]), action: match[4] ? decodeURIComponent(match[4]) : null };
  } catch (_) {
    return null;
  }
}

/**
 * Opens the notification the page was opened for (from a system or desktop notification): expanded
 * and focused; for a typed reply, its reply field focused; for another action, the action done as
 * its button does it (the passcode asked first where it needs one).
 */
function openWhatWasRequested() {
  const wanted = openedFor;
  openedFor = null;
  if (location.hash) history.replaceState(null, "", "/");
  const notification = state.notifications.find((n) => n.bundleIdentifier === wanted.app && n.notification.request.identifier === wanted.identifier);
  const action = wanted.action ? notification?.actions.find((a) => a.identifier === wanted.action) : null;
  if (!notification || (wanted.action && !action)) return showError("That notification is no longer in the list.");
  if (action && !action.textInput) {
    const perform = () => respond(notification, { kind: "action", actionIdentifier: action.identifier });
    return action.options & (ACTION_AUTHENTICATION_REQUIRED | ACTION_FOREGROUND) ? whenUnlocked(`to choose “${action.title}”`, perform) : perform();
  }
  // Opened, or a reply to write: in the list, so once the device is unlocked.
  if (state.device.locked) {
    return whenUnlocked(action ? `to choose “${action.title}”` : `to open ${notification.notification.request.content.title || "the notification"}`, () => {
      openedFor = wanted;
      refresh();
    });
  }
  const draft = draftOf(notification);
  draft.expanded = true;
  if (action) draft.replyAction = action.identifier;
  showSettings(false);
  showComposer(false);
  render();
  const article = elements.list.querySelector(`article[data-key="${CSS.escape(keyOf(notification))}"]`);
  article?.scrollIntoView({ block: "center" });
  (article?.querySelector("form.reply input") ?? article?.querySelector("button.open"))?.focus();
}

// MARK: Keys

/**
 * The lists by keyboard: up and down (or j and k) move between notifications, Home and End to the
 * first and last, Delete (or Backspace) clears the one the focus is in; Tab reaches its buttons.
 */
function listKeys(event) {
  if (event.target.closest("input, textarea, select, iframe") || event.altKey || event.ctrlKey || event.metaKey) return;
  const list = event.currentTarget;
  const cards = [...list.querySelectorAll("article.notification")].filter((article) => article.offsetParent !== null);
  const current = event.target.closest("article.notification");
  const index = cards.indexOf(current);
  const focusCard = (article) => {
    if (!article) return;
    event.preventDefault();
    (article.querySelector("button.open") ?? article).focus();
    article.scrollIntoView({ block: "nearest" });
  };
  switch (event.key) {
    case "ArrowDown": case "j": return focusCard(cards[index + 1] ?? cards[0]);
    case "ArrowUp": case "k": return focusCard(index > 0 ? cards[index - 1] : cards[cards.length - 1]);
    case "Home": return focusCard(cards[0]);
    case "End": return focusCard(cards[cards.length - 1]);
    case "Delete": case "Backspace": {
      if (!current) return;
      event.preventDefault();
      // The focus goes on to the next one, as the cleared one leaves.
      const next = cards[index + 1] ?? cards[index - 1];
      focusAfterRender = next?.dataset.key ?? null;
      current.querySelector("button.close")?.click();
      return;
    }
    default:
  }
}
elements.list.addEventListener("keydown", listKeys);
elements.lockList.addEventListener("keydown", listKeys);

/** Reads what is on screen; calls that come meanwhile read it once more afterwards. */
async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      const asked = performance.now();
      try {
        const answer = await fetch("/api/state", { credentials: "same-origin" });
        if (answer.status === 401) return showUnpaired();
        if (!answer.ok) {
          showError(`${answer.status} ${answer.statusText}`);
          return;
        }
        state = await answer.json();
        showPaired();
        learnIdentities(Object.values(state.apps || {}));
        if (typeof state.device.now === "number") deviceClockOffset = dateFromReference(state.device.now) - Date.now();
        // An interface whose notification left closes with it.
        const listed = new Set(state.notifications.map(keyOf));
        for (const key of [...extensionViews.keys()]) if (!listed.has(key)) closeInterface(key);
        // A banner leaves when its notification does (a summary's banner stays for its time); one put up
        // after this state was asked for is newer than it, and stays.
        const present = new Set(state.notifications.map((n) => `${n.bundleIdentifier}\n${n.notification.request.identifier}`));
        for (const banner of [...elements.banners.children]) {
          if (banner.dataset.identifier === undefined || Number(banner.dataset.shownAt) > asked) continue;
          if (!present.has(`${banner.dataset.app}\n${banner.dataset.identifier}`)) banner.remove();
        }
        render();
        retellTimes();
        forgetWhatLeft();
        if (openedFor) openWhatWasRequested();
      } catch (error) {
        showError(`The notification center cannot be reached: ${error.message}`);
      }
    } while (refreshAgain);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = null;
  }
}

/**
 * Opens the live events, and opens them again whenever they close: soon after (a restart of the
 * center takes a few seconds), at once when the tab is shown again or the network comes back.
 */
function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  const opened = new WebSocket(`ws://${location.host}/api/events`);
  socket = opened;
  opened.addEventListener("open", () => {
    reconnectDelay = 1;
    elements.connection.textContent = "Live";
    elements.connection.classList.remove("offline");
  });
  opened.addEventListener("message", (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    if (event.app) learnIdentities([event.app]);
    if (event.type === "presented" && event.notification) {
      const presented = { ...event.notification, previewHidden: event.previewHidden, attachments: event.attachments };
      // A tab in the background reaches the person through the system (where they allowed it), and
      // counts what they have not seen yet.
      // While locked, only what the lock screen shows (the app's Lock Screen setting), previews hidden as there.
      let system = false;
      if (document.visibilityState === "hidden" && (!state.device.locked || event.onLockScreen)) {
        if (presented.presentation.banner || presented.presentation.list) markUnseen(presented);
        if (presented.presentation.banner) system = showSystemNotification(presented);
      }
      // A locked device shows new notifications on the lock screen, not as banners.
      if (presented.presentation.banner && !state.device.locked) showBanner(presented, { silent: system });
    }
    // Whatever happened, what is on screen is read again: the daemon is the one truth. A summary that
    // came (one event per app in it) is announced once what it brought has been read.
    const read = refresh();
    if (event.type === "summaryDelivered" && typeof event.date === "number") {
      read.then(() => { if (!state.device.locked) showSummaryBanner(event.date); });
    }
  });
  opened.addEventListener("close", (event) => {
    socket = null;
    // Signed out (the secret was replaced: by this page, which holds the new one, or elsewhere), or
    // refused: the state's answer says which, and the page says how to pair again. It keeps trying: a
    // link opened in another tab pairs this one too.
    checkPairing().then((paired) => { if (paired && event.code === SIGNED_OUT_CLOSE_CODE) reconnectNow(); });
    elements.connection.textContent = document.body.dataset.unpaired ? "Not paired" : `Offline; trying again in ${reconnectDelay} s`;
    elements.connection.classList.add("offline");
    reconnectTimer = setTimeout(connect, reconnectDelay * 1000);
    reconnectDelay = Math.min(reconnectDelay * 2, MAXIMUM_RECONNECT_SECONDS);
  });
}

/** Reads whether this browser is still paired, when the live events closed; false when it cannot tell. */
async function checkPairing() {
  try {
    const answer = await fetch("/api/state", { credentials: "same-origin" });
    if (answer.status === 401) showUnpaired();
    return answer.ok;
  } catch (_) {
    // The center is not there (stopped, or restarting): the connection line says so.
    return false;
  }
}

/** Tries the live events again now, unless they are open or opening. */
function reconnectNow() {
  if (socket !== null) return;
  reconnectDelay = 1;
  connect();
}

/**
 * This browser is not (or no longer) paired: nothing of what was shown stays on the page, and the page
 * says how to pair again.
 */
function showUnpaired() {
  if (document.body.dataset.unpaired === "true") return;
  document.body.dataset.unpaired = "true";
  openedFor = null;
  state = { ...state, notifications: [], prompts: [], badges: {}, provisionalApps: [] };
  state.device = { ...state.device, locked: false };
  showSettings(false);
  showComposer(false);
  elements.banners.replaceChildren();
  for (const key of [...extensionViews.keys()]) closeInterface(key);
  clearError();
  render();
  elements.unpaired.hidden = false;
  elements.connection.textContent = "Not paired";
}

function showPaired() {
  if (document.body.dataset.unpaired !== "true") return;
  delete document.body.dataset.unpaired;
  elements.unpaired.hidden = true;
}

// MARK: Settings

async function getJSON(path) {
  const answer = await fetch(path, { credentials: "same-origin" });
  if (!answer.ok) throw new Error(`${answer.status} ${answer.statusText}`);
  return answer.json();
}

/** Every registered app's bundle identifier; null, with the error shown, when they cannot be read. */
async function registeredApps() {
  try {
    const apps = await getJSON("/api/apps");
    learnIdentities(apps);
    return apps.map((app) => app.bundleIdentifier);
  } catch (error) {
    showError(`The apps cannot be read: ${error.message}`);
    return null;
  }
}

function showSettings(shown) {
  if (shown) showComposer(false);
  elements.settings.hidden = !shown;
  elements.list.hidden = shown;
  elements.toggleSettings.textContent = shown ? "Done" : "Settings";
  elements.toggleSettings.setAttribute("aria-expanded", String(shown));
  if (shown) {
    // Read once for both lists.
    const apps = registeredApps();
    showPasscodeSettings();
    showPairingSettings();
    showFocusSettings(apps);
    showSummarySettings(apps);
    showApps(apps);
  }
}

/** The device's passcode: turned on, changed or turned off; each change needs the current one. */
function showPasscodeSettings() {
  const form = elements.passcodeSettings;
  form.replaceChildren();
  const has = state.device.hasPasscode;
  const field = (name, autocomplete) => {
    const input = make("input");
    input.type = "password";
    input.name = name;
    input.autocomplete = autocomplete;
    return input;
  };
  const group = make("fieldset");
  group.append(make("legend", "", "Passcode"));
  const current = field("current", "current-password");
  const next = field("new", "new-password");
  if (has) group.append(row("Current Passcode", current));
  group.append(row(has ? "New Passcode" : "Passcode", next));
  const buttons = make("div", "row");
  const save = make("button", "app-link", has ? "Change Passcode" : "Turn Passcode On");
  save.type = "submit";
  buttons.append(save);
  const change = async (passcode) => {
    const done = await send("PUT", "/api/device/passcode", { passcode, ...(has ? { current: current.value } : {}) });
    if (!done) return;
    state.device.hasPasscode = passcode !== null;
    showPasscodeSettings();
    const saved = make("p", "saved", passcode === null ? "Passcode turned off" : "Passcode saved");
    saved.setAttribute("role", "status");
    elements.passcodeSettings.append(saved);
  };
  if (has) {
    const off = make("button", "app-link destructive", "Turn Passcode Off");
    off.type = "button";
    off.addEventListener("click", () => change(null));
    buttons.append(off);
  }
  group.append(buttons);
  form.append(group);
  form.onsubmit = (event) => {
    event.preventDefault();
    change(next.value);
  };
}

/**
 * This browser's pairing: "Sign Out Other Browsers" replaces the secret; this browser is given the new
 * one, every other browser (and every earlier link) is signed out.
 */
function showPairingSettings() {
  const form = elements.pairingSettings;
  form.replaceChildren();
  const group = make("fieldset");
  group.append(make("legend", "", "This Browser"));
  // System notifications while this tab is in the background: the browser asks the person, on a click.
  const system = make("div", "row");
  const systemState = make("span", "hint");
  const toggle = make("button", "app-link", "");
  toggle.type = "button";
  toggle.id = "system-notifications";
  const drawSystem = () => {
    const supported = "Notification" in window;
    const blocked = supported && Notification.permission === "denied";
    toggle.hidden = !supported || blocked;
    toggle.textContent = systemNotificationsOn() ? "Turn Off Background Notifications" : "Turn On Background Notifications";
    toggle.setAttribute("aria-pressed", String(systemNotificationsOn()));
    systemState.textContent = !supported ? "This browser cannot show system notifications."
      : blocked ? "This browser blocks this page's notifications: allow them in its site settings."
      : systemNotificationsOn() ? "Notifications show on this computer while this tab is in the background."
      : "Show notifications on this computer while this tab is in the background.";
  };
  toggle.addEventListener("click", async () => {
    if (systemNotificationsOn()) {
      localStorage.setItem(SYSTEM_NOTIFICATIONS_KEY, "off");
    } else if (await Notification.requestPermission() === "granted") {
      localStorage.setItem(SYSTEM_NOTIFICATIONS_KEY, "on");
    }
    drawSystem();
  });
  drawSystem();
  system.append(systemState, toggle);
  group.append(system);
  group.append(make("p", "hint", "This browser stays paired across restarts. `unotify center link` prints the link that pairs another one."));
  const buttons = make("div", "row");
  const replace = make("button", "app-link destructive", "Sign Out Other Browsers");
  replace.type = "submit";
  buttons.append(replace);
  group.append(buttons);
  form.append(group);
  form.onsubmit = async (event) => {
    event.preventDefault();
    if (!(await send("POST", "/api/pairing/replace"))) return;
    showPairingSettings();
    const saved = make("p", "saved", "Other browsers signed out");
    saved.setAttribute("role", "status");
    form.append(saved);
  };
}

/**
 * The Focus: whether time-sensitive notifications break through, and which apps are allowed; each
 * change is sent at once (turning the Focus on when it is off).
 */
async function showFocusSettings(reading) {
  const form = elements.focusSettings;
  const apps = (await reading) ?? [];
  const draw = () => {
    form.replaceChildren();
    const focus = state.device.focus ?? lastFocus;
    const group = make("fieldset");
    group.append(make("legend", "", "Focus"));
    const on = make("input");
    on.type = "checkbox";
    on.name = "focusOn";
    on.setAttribute("role", "switch");
    on.checked = Boolean(state.device.focus);
    on.addEventListener("change", async () => { await setFocus(on.checked ? focus : null); draw(); });
    group.append(row(focus.name, on));
    const timeSensitive = make("input");
    timeSensitive.type = "checkbox";
    timeSensitive.name = "allowsTimeSensitive";
    timeSensitive.setAttribute("role", "switch");
    timeSensitive.checked = focus.allowsTimeSensitive;
    timeSensitive.addEventListener("change", async () => {
      await setFocus({ ...focus, allowsTimeSensitive: timeSensitive.checked });
      draw();
    });
    group.append(row("Time Sensitive Notifications", timeSensitive));
    if (apps.length > 0) group.append(make("p", "hint", "Allowed apps: everything from these breaks through."));
    for (const app of apps) {
      const allowed = make("input");
      allowed.type = "checkbox";
      allowed.name = "allowedApp";
      allowed.value = app;
      allowed.checked = focus.allowedApps.includes(app);
      allowed.addEventListener("change", async () => {
        const others = focus.allowedApps.filter((name) => name !== app);
        await setFocus({ ...focus, allowedApps: allowed.checked ? [...others, app] : others });
        draw();
      });
      group.append(row(appName(app), allowed));
    }
    form.append(group);
  };
  form.onsubmit = (event) => event.preventDefault();
  draw();
}

async function setSummary(summary) {
  const answer = await send("PUT", "/api/device/summary", { summary });
  if (!answer) return null;
  state.device.summary = answer.summary;
  render();
  return answer;
}

/** The ordinal of a summary, as iOS names them: "1st Summary", "2nd Summary"… */
function summaryName(index) {
  const n = index + 1;
  const suffix = n % 10 === 1 && n !== 11 ? "st" : n % 10 === 2 && n !== 12 ? "nd" : n % 10 === 3 && n !== 13 ? "rd" : "th";
  return `${n}${suffix} Summary`;
}

/**
 * Settings › Notifications › Scheduled Summary: on or off, its times (one to twelve), Show Next Summary,
 * and the apps in it (each app's Scheduled Summary setting). Each change is sent at once.
 */
async function showSummarySettings(reading) {
  const form = elements.summarySettings;
  const apps = (await reading) ?? [];
  // Only apps the person allowed can be put in the summary; each one's setting is read once.
  const settings = new Map();
  for (const app of apps) {
    try {
      const current = await getJSON(`/api/apps/${encodeURIComponent(app)}/settings`);
      if (current.scheduledDeliverySetting !== SETTING_NOT_SUPPORTED) settings.set(app, current);
    } catch (error) {
      showError(`The settings of ${app} cannot be read: ${error.message}`);
    }
  }
  const draw = () => {
    form.replaceChildren();
    const summary = state.device.summary;
    const group = make("fieldset");
    group.append(make("legend", "", "Scheduled Summary"));
    const on = make("input");
    on.type = "checkbox";
    on.name = "summaryOn";
    on.setAttribute("role", "switch");
    on.checked = Boolean(summary);
    on.addEventListener("change", async () => { await setSummary(on.checked ? { times: ["08:00", "18:00"], showsNextSummary: false } : null); draw(); });
    group.append(row("Scheduled Summary", on));
    if (!summary) {
      group.append(make("p", "hint", "Get the notifications of the apps you choose together, at the times you pick."));
      form.append(group);
      return;
    }
    summary.times.forEach((time, index) => {
      const input = make("input");
      input.type = "time";
      input.name = "summaryTime";
      input.value = time;
      input.required = true;
      input.addEventListener("change", async () => {
        if (!input.value) return;
        const times = summary.times.map((other, at) => at === index ? input.value : other);
        await setSummary({ ...summary, times });
        draw();
      });
      const line = row(summaryName(index), input);
      if (summary.times.length > 1) {
        const remove = make("button", "remove-time", "Remove");
        remove.type = "button";
        remove.setAttribute("aria-label", `Remove the ${summaryName(index)}`);
        remove.addEventListener("click", async () => {
          await setSummary({ ...summary, times: summary.times.filter((_, at) => at !== index) });
          draw();
        });
        line.append(remove);
      }
      group.append(line);
    });
    if (summary.times.length < 12) {
      const add = make("button", "add-time", "Add Summary");
      add.type = "button";
      add.addEventListener("click", async () => {
        // The next whole hour not yet taken, from noon.
        const taken = new Set(summary.times);
        const hour = [...Array(24).keys()].map((offset) => (12 + offset) % 24).find((candidate) => !taken.has(`${String(candidate).padStart(2, "0")}:00`));
        await setSummary({ ...summary, times: [...summary.times, `${String(hour).padStart(2, "0")}:00`] });
        draw();
        form.querySelector(".add-time")?.focus();
      });
      group.append(add);
    }
    const early = make("input");
    early.type = "checkbox";
    early.name = "showsNextSummary";
    early.setAttribute("role", "switch");
    early.checked = summary.showsNextSummary;
    early.addEventListener("change", async () => { await setSummary({ ...summary, showsNextSummary: early.checked }); draw(); });
    group.append(row("Show Next Summary", early));
    if (settings.size > 0) group.append(make("p", "hint", "Apps in Summary: their notifications wait for the next summary."));
    for (const [app, current] of settings) {
      const member = make("input");
      member.type = "checkbox";
      member.name = "summaryApp";
      member.value = app;
      member.checked = current.scheduledDeliverySetting === SETTING_ENABLED;
      member.addEventListener("change", async () => {
        const next = await send("PATCH", `/api/apps/${encodeURIComponent(app)}/settings`,
          { scheduledDeliverySetting: member.checked ? SETTING_ENABLED : SETTING_DISABLED });
        if (next) settings.set(app, next);
        draw();
      });
      group.append(row(appName(app), member));
    }
    form.append(group);
  };
  form.onsubmit = (event) => event.preventDefault();
  draw();
}

/** Every registered app, as Settings › Notifications lists them (`reading`: the apps being read). */
async function showApps(reading = registeredApps()) {
  elements.appSettings.hidden = true;
  elements.settingsApps.hidden = false;
  elements.settingsApps.replaceChildren();
  const apps = await reading;
  if (apps === null) return;
  if (apps.length === 0) elements.settingsApps.append(make("li", "summary", "No apps are registered."));
  for (const app of apps) {
    const item = make("li");
    const open = make("button");
    open.type = "button";
    open.dataset.app = app;
    const name = make("span", "app");
    name.append(appIcon(app), make("span", "", appName(app)));
    open.append(name, make("span", "summary", "›"));
    open.addEventListener("click", () => showAppSettings(app));
    item.append(open);
    elements.settingsApps.append(item);
  }
}

function row(labelText, control) {
  const label = make("label", "row");
  label.append(make("span", "", labelText), control);
  return label;
}

/** One app's settings; each change is sent at once, as iOS applies it. */
async function showAppSettings(app) {
  let settings;
  try {
    settings = await getJSON(`/api/apps/${encodeURIComponent(app)}/settings`);
  } catch (error) {
    showError(`The settings of ${app} cannot be read: ${error.message}`);
    return;
  }
  elements.settingsApps.hidden = true;
  const form = elements.appSettings;
  form.hidden = false;
  form.dataset.app = app;
  const saved = make("p", "saved");
  saved.setAttribute("role", "status");
  const path = `/api/apps/${encodeURIComponent(app)}`;

  const render = (current) => {
    form.replaceChildren();
    const back = make("button", "back", "‹ Notifications");
    back.type = "button";
    back.addEventListener("click", () => showApps());
    form.append(back, make("h3", "", appName(app)));

    const allowed = ALLOWED_STATUSES.includes(current.authorizationStatus);
    const allow = make("input");
    allow.type = "checkbox";
    allow.name = "allowNotifications";
    allow.setAttribute("role", "switch");
    allow.checked = allowed;
    allow.addEventListener("change", async () => {
      const next = await send("POST", `${path}/authorization`, { decision: allow.checked ? "grant" : "deny" });
      if (next) changed(next);
      else render(current);
    });
    const top = make("fieldset");
    top.append(make("legend", "", "Notifications"), row("Allow Notifications", allow));
    form.append(top);

    if (allowed) {
      for (const [title, switches] of SWITCHES) {
        const group = make("fieldset");
        group.append(make("legend", "", title || "Options"));
        for (const [key, label] of switches) {
          if (current[key] === SETTING_NOT_SUPPORTED || current[key] === undefined) continue;
          const toggle = make("input");
          toggle.type = "checkbox";
          toggle.name = key;
          toggle.setAttribute("role", "switch");
          toggle.checked = current[key] === SETTING_ENABLED;
          toggle.addEventListener("change", () => patch({ [key]: toggle.checked ? SETTING_ENABLED : SETTING_DISABLED }));
          group.append(row(label, toggle));
          if (key === "alertSetting" && current.alertSetting === SETTING_ENABLED) {
            group.append(row("Banner Style", choice("alertStyle", ALERT_STYLES, current.alertStyle)));
          }
        }
        if (group.children.length > 1) form.append(group);
      }
      const appearance = make("fieldset");
      appearance.append(make("legend", "", "Lock Screen Appearance"), row("Show Previews", choice("showPreviewsSetting", PREVIEWS, current.showPreviewsSetting)));
      form.append(appearance);
      if (current.providesAppNotificationSettings) {
        const link = make("button", "app-link", `${app} Notification Settings`);
        link.type = "button";
        link.addEventListener("click", () => send("POST", `${path}/open-settings`, {}));
        form.append(link);
      }
    }
    form.append(saved);
  };

  const choice = (key, options, value) => {
    const select = make("select");
    select.name = key;
    for (const [raw, label] of options) {
      const option = make("option", "", label);
      option.value = String(raw);
      option.selected = raw === value;
      select.append(option);
    }
    select.addEventListener("change", () => patch({ [key]: Number(select.value) }));
    return select;
  };

  const changed = (next) => {
    settings = next;
    render(next);
    saved.textContent = "Saved";
    form.dataset.saved = String(Number(form.dataset.saved || "0") + 1);
  };

  const patch = async (change) => {
    const next = await send("PATCH", `${path}/settings`, change);
    if (next) changed(next);
    else render(settings);
  };

  render(settings);
  form.querySelector("input, select, button")?.focus();
}

elements.toggleSettings.addEventListener("click", () => showSettings(elements.settings.hidden));

// MARK: Composer

// What the composer starts from, by kind: a push as a provider sends it, a request as an app adds it.
const COMPOSE_TEMPLATES = {
  push: { aps: { alert: { title: "Hello", body: "Sent from the composer" }, sound: "default" } },
  local: { identifier: "composed", content: { title: "Hello", body: "Sent from the composer", sound: { type: "default" } }, trigger: null },
};
// The keys the composer offers, by kind: a path in the JSON and the value it starts with.
const COMPOSE_KEYS = {
  push: [
    ["aps.alert.title", "Title"], ["aps.alert.subtitle", "Subtitle"], ["aps.alert.body", "Body"], ["aps.badge", 1],
    ["aps.sound", "default"], ["aps.thread-id", "thread"], ["aps.category", "CATEGORY"], ["aps.mutable-content", 1],
    ["aps.content-available", 1], ["aps.interruption-level", "time-sensitive"], ["aps.relevance-score", 0.5],
    ["aps.target-content-id", "target"], ["aps.alert.title-loc-key", "KEY"], ["aps.alert.loc-args", []],
  ],
  local: [
    ["content.title", "Title"], ["content.subtitle", "Subtitle"], ["content.body", "Body"], ["content.badge", 1],
    ["content.sound", { type: "default" }], ["content.threadIdentifier", "thread"], ["content.categoryIdentifier", "CATEGORY"],
    ["content.interruptionLevel", 2], ["content.relevanceScore", 0.5], ["content.userInfo", {}],
    ["trigger", { type: "timeInterval", interval: 5, repeats: false }],
  ],
};

async function showComposer(shown) {
  elements.composer.hidden = !shown;
  elements.toggleComposer.setAttribute("aria-expanded", String(shown));
  elements.toggleComposer.textContent = shown ? "Done" : "Compose";
  if (!shown) {
    elements.list.hidden = !elements.settings.hidden;
    return;
  }
  showSettings(false);
  elements.list.hidden = true;
  const apps = (await registeredApps()) ?? [];
  const chosen = elements.composeApp.value;
  elements.composeApp.replaceChildren(...apps.map((app) => {
    const option = make("option", "", appName(app) === app ? app : `${appName(app)} (${app})`);
    option.value = app;
    option.selected = app === chosen;
    return option;
  }));
  if (!elements.composeJSON.value.trim()) useTemplate();
  showKeys();
  elements.composeApp.focus();
}

function useTemplate() {
  elements.composeJSON.value = JSON.stringify(COMPOSE_TEMPLATES[elements.composeKind.value], null, 2);
  checkComposed();
}

function showKeys() {
  const kind = elements.composeKind.value;
  elements.compose.querySelector(".push-only").hidden = kind !== "push";
  elements.composeKeys.replaceChildren(...COMPOSE_KEYS[kind].map(([path, value]) => {
    const button = make("button", "key", path);
    button.type = "button";
    button.dataset.path = path;
    button.title = `Insert ${path}`;
    button.addEventListener("click", () => insertKey(path, value));
    return button;
  }));
}

/** Sets `path` in the JSON being written (keeping what is there), if the JSON can be read. */
function insertKey(path, value) {
  const parsed = checkComposed();
  if (parsed === undefined) return;
  const root = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  const names = path.split(".");
  let node = root;
  for (const name of names.slice(0, -1)) {
    if (!node[name] || typeof node[name] !== "object" || Array.isArray(node[name])) node[name] = {};
    node = node[name];
  }
  // What is there already is kept; a null (the template's "no trigger") is replaced.
  if (node[names.at(-1)] === undefined || node[names.at(-1)] === null) node[names.at(-1)] = value;
  elements.composeJSON.value = JSON.stringify(root, null, 2);
  checkComposed();
  elements.composeJSON.focus();
}

/**
 * Reads the JSON as it is typed: the parsed value, or `undefined` with the problem shown under the
 * editor (where it is: the line and column).
 */
function checkComposed() {
  const text = elements.composeJSON.value;
  try {
    const value = JSON.parse(text);
    if (elements.compose.dataset.problem === "syntax") composeProblem(null);
    return value;
  } catch (error) {
    const at = /position (\d+)/.exec(error.message);
    let where = "";
    if (at && !error.message.includes("(line")) {
      const before = text.slice(0, Number(at[1]));
      const line = before.split("\n").length;
      const column = before.length - before.lastIndexOf("\n");
      where = ` (line ${line}, column ${column})`;
    }
    composeProblem(`Not valid JSON${where}: ${error.message}`, "syntax");
    return undefined;
  }
}

function composeProblem(text, kind) {
  elements.composeProblem.hidden = !text;
  elements.composeProblem.textContent = text || "";
  elements.composeJSON.setAttribute("aria-invalid", String(Boolean(text)));
  if (text) elements.compose.dataset.problem = kind;
  else delete elements.compose.dataset.problem;
}

elements.toggleComposer.addEventListener("click", () => showComposer(elements.composer.hidden));
elements.composeKind.addEventListener("change", () => {
  composeProblem(null);
  useTemplate();
  showKeys();
});
elements.composeJSON.addEventListener("input", checkComposed);
elements.compose.addEventListener("submit", async (event) => {
  event.preventDefault();
  elements.composeSent.textContent = "";
  const app = elements.composeApp.value;
  if (!app) return composeProblem("Register an app first: `unotify apps add <bundle identifier>`.", "daemon");
  const value = checkComposed();
  if (value === undefined) return elements.composeJSON.focus();
  const kind = elements.composeKind.value;
  const path = `/api/apps/${encodeURIComponent(app)}/${kind === "push" ? "pushes" : "requests"}`;
  const body = kind === "push"
    ? { payload: elements.composeJSON.value, ...(elements.composeCollapse.value ? { collapseID: elements.composeCollapse.value } : {}) }
    : value;
  // The daemon's refusal is shown under the editor, in its words (Apple's rule and where it broke).
  const underEditor = {
    problem: (text) => {
      composeProblem(text, "daemon");
      elements.composeJSON.focus();
    },
    fine: () => composeProblem(null),
  };
  if (await send("POST", path, body, underEditor)) elements.composeSent.textContent = `Sent to ${app}`;
});

// Where the header ends on screen, for banners to come in under it.
const bar = document.querySelector(".bar");
const placeBanners = () => document.documentElement.style.setProperty("--bar-bottom", `${Math.max(0, bar.getBoundingClientRect().bottom)}px`);
new ResizeObserver(placeBanners).observe(bar);
window.addEventListener("scroll", placeBanners, { passive: true });
placeBanners();

window.addEventListener("online", reconnectNow);
window.addEventListener("hashchange", () => {
  openedFor = requestedByFragment();
  if (openedFor) refresh();
});
setInterval(retellTimes, 15000);
document.addEventListener("visibilitychange", () => { if (!document.hidden) reconnectNow(); });

document.documentElement.dataset.ready = "true";
connect();
