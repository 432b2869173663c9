import NotificationCore
import Testing

/// A person who allowed alerts, sounds and badges, and nothing else.
private let allowed = NotificationSettings.granting([.alert, .sound, .badge], status: .authorized)
/// An app that asked quietly and was granted provisional authorization.
private let provisional = NotificationSettings.granting([.alert, .sound, .badge, .provisional], status: .provisional)

private func changing(_ base: NotificationSettings = allowed, _ change: (inout NotificationSettings) -> Void) -> NotificationSettings {
    var settings = base
    change(&settings)
    return settings
}

private func makeContent(
    sound: NotificationSound? = NotificationSound(kind: .default),
    badge: Int? = 3,
    level: InterruptionLevel = .active
) -> NotificationContent {
    var content = NotificationContent()
    content.title = "Title"
    content.sound = sound
    content.badge = badge
    content.interruptionLevel = level
    return content
}

private let criticalSound = NotificationSound(kind: .default, isCritical: true, volume: 0.5)

@Suite("Presentation policy")
struct PresentationPolicyTests {
    struct ForegroundCase: Sendable, CustomTestStringConvertible {
        var name: String
        var options: PresentationOptions
        var content: NotificationContent = makeContent()
        var settings: NotificationSettings = allowed
        var expected: Presentation
        var testDescription: String { name }
    }

    static let foregroundCases: [ForegroundCase] = [
        ForegroundCase(name: "everything asked, everything allowed", options: [.banner, .list, .sound, .badge],
                       expected: Presentation(banner: true, list: true, sound: true, badge: 3)),
        ForegroundCase(name: "nothing asked: nothing shown", options: [], expected: .none),
        ForegroundCase(name: ".alert means banner and list", options: [.alert],
                       expected: Presentation(banner: true, list: true)),
        ForegroundCase(name: ".banner alone is not listed", options: [.banner], expected: Presentation(banner: true)),
        ForegroundCase(name: ".list alone is listed without a banner", options: [.list], expected: Presentation(list: true)),
        ForegroundCase(name: "alerts disabled block the banner even if asked", options: [.banner, .list],
                       settings: changing { $0.alertSetting = .disabled }, expected: Presentation(list: true)),
        ForegroundCase(name: "alerts disabled block .alert's banner, not its list", options: [.alert],
                       settings: changing { $0.alertSetting = .disabled }, expected: Presentation(list: true)),
        ForegroundCase(name: "alert style none blocks the banner", options: [.banner],
                       settings: changing { $0.alertStyle = .none }, expected: .none),
        ForegroundCase(name: "alert style alert shows the banner", options: [.banner],
                       settings: changing { $0.alertStyle = .alert }, expected: Presentation(banner: true)),
        ForegroundCase(name: "notification center off: .list is not honoured", options: [.list, .banner],
                       settings: changing { $0.notificationCenterSetting = .disabled }, expected: Presentation(banner: true)),
        ForegroundCase(name: "foreground presentation never reaches the lock screen", options: [.banner, .list, .sound, .badge],
                       settings: changing { $0.lockScreenSetting = .enabled },
                       expected: Presentation(banner: true, list: true, lockScreen: false, sound: true, badge: 3)),
        ForegroundCase(name: "sound needs the content to have one", options: [.sound], content: makeContent(sound: nil), expected: .none),
        ForegroundCase(name: "sound needs the sound setting", options: [.sound],
                       settings: changing { $0.soundSetting = .disabled }, expected: .none),
        ForegroundCase(name: "sound needs to be asked for", options: [.banner], expected: Presentation(banner: true)),
        ForegroundCase(name: "a critical sound plays with sounds off if critical alerts are on", options: [.sound],
                       content: makeContent(sound: criticalSound),
                       settings: changing { $0.soundSetting = .disabled; $0.criticalAlertSetting = .enabled },
                       expected: Presentation(sound: true)),
        ForegroundCase(name: "a critical interruption plays with sounds off if critical alerts are on", options: [.sound],
                       content: makeContent(level: .critical),
                       settings: changing { $0.soundSetting = .disabled; $0.criticalAlertSetting = .enabled },
                       expected: Presentation(sound: true)),
        ForegroundCase(name: "a critical sound is silent with sounds and critical alerts off", options: [.sound],
                       content: makeContent(sound: criticalSound),
                       settings: changing { $0.soundSetting = .disabled; $0.criticalAlertSetting = .disabled },
                       expected: .none),
        ForegroundCase(name: "badge needs the badge setting", options: [.badge],
                       settings: changing { $0.badgeSetting = .disabled }, expected: .none),
        ForegroundCase(name: "badge needs the content to carry one", options: [.badge], content: makeContent(badge: nil), expected: .none),
        ForegroundCase(name: "a badge of 0 is applied (it clears the badge)", options: [.badge], content: makeContent(badge: 0),
                       expected: Presentation(badge: 0)),
        ForegroundCase(name: "badge needs to be asked for", options: [.list], content: makeContent(badge: 7),
                       expected: Presentation(list: true)),
        ForegroundCase(name: "ephemeral is authorized", options: [.banner, .list],
                       settings: changing { $0.authorizationStatus = .ephemeral }, expected: Presentation(banner: true, list: true)),
        ForegroundCase(name: "provisional: list only and quiet, whatever is asked", options: [.banner, .list, .sound, .badge],
                       settings: provisional, expected: Presentation(list: true)),
        ForegroundCase(name: "provisional: a banner request still lists", options: [.banner],
                       settings: provisional, expected: Presentation(list: true)),
        ForegroundCase(name: "provisional: .alert lists", options: [.alert],
                       settings: provisional, expected: Presentation(list: true)),
        ForegroundCase(name: "provisional: sound and badge alone show nothing", options: [.sound, .badge],
                       settings: provisional, expected: .none),
        ForegroundCase(name: "provisional with all settings switched on is still quiet", options: [.banner, .list, .sound, .badge],
                       settings: changing(provisional) {
                           $0.alertSetting = .enabled; $0.soundSetting = .enabled; $0.badgeSetting = .enabled
                           $0.alertStyle = .banner; $0.lockScreenSetting = .enabled
                       },
                       expected: Presentation(list: true)),
        ForegroundCase(name: "denied: nothing", options: [.banner, .list, .sound, .badge],
                       settings: changing { $0.authorizationStatus = .denied }, expected: .none),
        ForegroundCase(name: "not determined: nothing", options: [.banner, .list, .sound, .badge],
                       settings: .notDetermined, expected: .none),
    ]

    @Test(arguments: foregroundCases)
    func foreground(_ testCase: ForegroundCase) {
        let presentation = PresentationPolicy.foreground(options: testCase.options, content: testCase.content, settings: testCase.settings)
        #expect(presentation == testCase.expected)
    }

    struct BackgroundCase: Sendable, CustomTestStringConvertible {
        var name: String
        var content: NotificationContent = makeContent()
        var settings: NotificationSettings = allowed
        var expected: Presentation
        var testDescription: String { name }
    }

    static let backgroundCases: [BackgroundCase] = [
        BackgroundCase(name: "everything allowed", expected: Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "alerts disabled: no banner", settings: changing { $0.alertSetting = .disabled },
                       expected: Presentation(list: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "alert style none: no banner", settings: changing { $0.alertStyle = .none },
                       expected: Presentation(list: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "notification center off: not listed", settings: changing { $0.notificationCenterSetting = .disabled },
                       expected: Presentation(banner: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "lock screen off", settings: changing { $0.lockScreenSetting = .disabled },
                       expected: Presentation(banner: true, list: true, sound: true, badge: 3)),
        BackgroundCase(name: "sounds off", settings: changing { $0.soundSetting = .disabled },
                       expected: Presentation(banner: true, list: true, lockScreen: true, badge: 3)),
        BackgroundCase(name: "content without a sound", content: makeContent(sound: nil),
                       expected: Presentation(banner: true, list: true, lockScreen: true, badge: 3)),
        BackgroundCase(name: "badges off", settings: changing { $0.badgeSetting = .disabled },
                       expected: Presentation(banner: true, list: true, lockScreen: true, sound: true)),
        BackgroundCase(name: "content without a badge leaves it alone", content: makeContent(badge: nil),
                       expected: Presentation(banner: true, list: true, lockScreen: true, sound: true)),
        BackgroundCase(name: "passive: no banner and no sound, but listed", content: makeContent(level: .passive),
                       expected: Presentation(list: true, lockScreen: true, badge: 3)),
        BackgroundCase(name: "passive with a critical sound is still silent", content: makeContent(sound: criticalSound, level: .passive),
                       settings: changing { $0.criticalAlertSetting = .enabled },
                       expected: Presentation(list: true, lockScreen: true, badge: 3)),
        BackgroundCase(name: "time-sensitive presents like active", content: makeContent(level: .timeSensitive),
                       expected: Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "critical sound plays with sounds off if critical alerts are on", content: makeContent(sound: criticalSound),
                       settings: changing { $0.soundSetting = .disabled; $0.criticalAlertSetting = .enabled },
                       expected: Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 3)),
        BackgroundCase(name: "everything switched off: nothing, though authorized",
                       settings: changing {
                           $0.alertSetting = .disabled; $0.soundSetting = .disabled; $0.badgeSetting = .disabled
                           $0.notificationCenterSetting = .disabled; $0.lockScreenSetting = .disabled
                       },
                       expected: .none),
        BackgroundCase(name: "provisional: list only and quiet", settings: provisional, expected: Presentation(list: true)),
        BackgroundCase(name: "provisional and passive: listed", content: makeContent(level: .passive), settings: provisional,
                       expected: Presentation(list: true)),
        BackgroundCase(name: "provisional with the list off: nothing",
                       settings: changing(provisional) { $0.notificationCenterSetting = .disabled }, expected: .none),
        BackgroundCase(name: "denied: nothing", settings: changing { $0.authorizationStatus = .denied }, expected: .none),
        BackgroundCase(name: "not determined: nothing", settings: .notDetermined, expected: .none),
    ]

    @Test(arguments: backgroundCases)
    func background(_ testCase: BackgroundCase) {
        #expect(PresentationPolicy.background(content: testCase.content, settings: testCase.settings) == testCase.expected)
    }

    @Test("only authorized, provisional and ephemeral apps deliver", arguments: AuthorizationStatus.allCases)
    func allowsDelivery(status: AuthorizationStatus) {
        let expected = [.authorized, .provisional, .ephemeral].contains(status)
        #expect(PresentationPolicy.allowsDelivery(changing { $0.authorizationStatus = status }) == expected)
    }

    @Test("a provisional notification is visible and quiet, and a denied one is neither shown nor heard")
    func visibleAndQuiet() {
        let quiet = PresentationPolicy.background(content: makeContent(), settings: provisional)
        #expect(quiet.isVisible)
        #expect(quiet.isQuiet)
        let loud = PresentationPolicy.background(content: makeContent(), settings: allowed)
        #expect(loud.isVisible)
        #expect(!loud.isQuiet)
        let denied = PresentationPolicy.background(content: makeContent(), settings: changing { $0.authorizationStatus = .denied })
        #expect(!denied.isVisible)
        #expect(denied.isQuiet)
    }

    @Test("a lock-screen-only presentation is visible")
    func lockScreenOnlyIsVisible() {
        #expect(Presentation(lockScreen: true).isVisible)
        #expect(!Presentation(sound: true, badge: 1).isVisible)
        #expect(!Presentation(sound: true).isQuiet)
        #expect(!Presentation(banner: true).isQuiet)
    }

    @Test("what the list keeps shows on the lock screen, while the app's Lock Screen setting is on")
    func theLockScreenShowsWhatTheListKeeps() {
        // Presented in the foreground as a banner and in the list: on the lock screen once locked.
        let foreground = PresentationPolicy.foreground(options: [.banner, .list], content: makeContent(), settings: allowed)
        #expect(!foreground.lockScreen)
        #expect(PresentationPolicy.showsOnLockScreen(foreground, settings: allowed))
        // A banner only (not kept in the list) leaves nothing to show.
        let bannerOnly = PresentationPolicy.foreground(options: [.banner], content: makeContent(), settings: allowed)
        #expect(!PresentationPolicy.showsOnLockScreen(bannerOnly, settings: allowed))
        // The setting as it is now decides, for every notification already delivered.
        let background = PresentationPolicy.background(content: makeContent(), settings: allowed)
        #expect(PresentationPolicy.showsOnLockScreen(background, settings: allowed))
        let lockScreenOff = changing { $0.lockScreenSetting = .disabled }
        #expect(!PresentationPolicy.showsOnLockScreen(background, settings: lockScreenOff))
        #expect(!PresentationPolicy.showsOnLockScreen(foreground, settings: lockScreenOff))
        // A provisional app's notifications stay in Notification Center only.
        let quiet = PresentationPolicy.background(content: makeContent(), settings: provisional)
        #expect(!PresentationPolicy.showsOnLockScreen(quiet, settings: provisional))
    }

    // MARK: Focus

    @Test func aFocusSilencesWhatItDoesNotLetThrough() {
        let loud = Presentation(banner: true, list: true, lockScreen: true, sound: true, badge: 3)
        let silenced = Presentation(list: true, lockScreen: true, badge: 3)
        let timeSensitiveOn = changing { $0.timeSensitiveSetting = .enabled }
        let focus = Focus(allowsTimeSensitive: true)
        let strict = Focus(allowsTimeSensitive: false)
        // No Focus: unchanged.
        #expect(PresentationPolicy.underFocus(loud, nil, content: makeContent(), settings: allowed) == loud)
        // Passive and active: silenced, the badge kept.
        #expect(PresentationPolicy.underFocus(loud, focus, content: makeContent(level: .active), settings: timeSensitiveOn) == silenced)
        #expect(PresentationPolicy.underFocus(loud, focus, content: makeContent(level: .passive), settings: timeSensitiveOn) == silenced)
        // Time-sensitive: through only when the Focus allows it and the app's setting is on.
        #expect(PresentationPolicy.underFocus(loud, focus, content: makeContent(level: .timeSensitive), settings: timeSensitiveOn) == loud)
        #expect(PresentationPolicy.underFocus(loud, focus, content: makeContent(level: .timeSensitive), settings: allowed) == silenced)
        #expect(PresentationPolicy.underFocus(loud, strict, content: makeContent(level: .timeSensitive), settings: timeSensitiveOn) == silenced)
        // Critical: always through.
        #expect(PresentationPolicy.underFocus(loud, strict, content: makeContent(level: .critical), settings: allowed) == loud)
    }

    @Test func aFocusLetsEverythingOfAnAllowedAppThrough() {
        let focus = Focus(name: "Work", allowsTimeSensitive: false, allowedApps: ["com.example.pager"])
        #expect(focus.applying(to: "com.example.pager") == nil)
        #expect(focus.applying(to: "com.example.games") == focus)
        let device = DeviceConditions(timeZone: .gmt, focus: focus)
        #expect(device.applying(to: "com.example.pager").focus == nil)
        #expect(device.applying(to: "com.example.games").focus == focus)
    }
}
