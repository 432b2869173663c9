import Foundation

/// A daily, weekly or monthly wall-clock time, as a calendar trigger names it.
struct WallClockSpec: Sendable, Hashable, CustomStringConvertible {
    var hour: Int
    /// `nil` leaves the minute out of the components; it then matches minute 0.
    var minute: Int?
    /// `nil` leaves the second out of the components; it then matches second 0.
    var second: Int?
    /// 1 is Sunday, as in `DateComponents.weekday`.
    var weekday: Int?
    var day: Int?

    var components: DateComponents {
        DateComponents(day: day, hour: hour, minute: minute, second: second, weekday: weekday)
    }

    /// The wall-clock time of day, in seconds after midnight.
    var secondOfDay: Int { hour * 3600 + (minute ?? 0) * 60 + (second ?? 0) }

    func matchesDay(_ day: CivilDay) -> Bool {
        (weekday == nil || weekday == day.weekday) && (self.day == nil || self.day == day.day)
    }

    var description: String {
        var text = String(format: "%02d:%02d:%02d", hour, minute ?? 0, second ?? 0)
        if minute == nil { text += " (no minute)" }
        if second == nil { text += " (no second)" }
        if let weekday { text += " weekday \(weekday)" }
        if let day { text += " day \(day)" }
        return text
    }
}

/// A date on the proleptic Gregorian calendar, counted in days from 1970-01-01, with no time zone.
///
/// Computed with Howard Hinnant's `civil_from_days`, so that the oracle shares no code with `Calendar`.
struct CivilDay: Sendable, Hashable, Comparable {
    var number: Int

    var year: Int { civil.year }
    var month: Int { civil.month }
    var day: Int { civil.day }
    /// 1 is Sunday; 1970-01-01 was a Thursday.
    var weekday: Int { ((number + 4) % 7 + 7) % 7 + 1 }

    func adding(_ days: Int) -> CivilDay { CivilDay(number: number + days) }

    static func < (lhs: CivilDay, rhs: CivilDay) -> Bool { lhs.number < rhs.number }

    private var civil: (year: Int, month: Int, day: Int) {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// An independent brute-force answer to "when does this wall-clock time next occur in this zone?".
///
/// It walks forward one local day at a time and reads nothing from the time zone but its UTC offset at an
/// instant. The rules it encodes are those `TriggerRules.nextDate` documents: a wall-clock time that the
/// clocks skip fires at the first instant after the gap, and one that they repeat fires only at its first
/// occurrence.
struct WallClockOracle {
    var zone: TimeZone

    func offset(at seconds: Int) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Local wall-clock seconds since 1970-01-01T00:00 for the instant `seconds` after the epoch.
    func localSeconds(at seconds: Int) -> Int { seconds + offset(at: seconds) }

    func civilDay(at seconds: Int) -> CivilDay {
        CivilDay(number: Int((Double(localSeconds(at: seconds)) / 86_400).rounded(.down)))
    }

    /// Every instant (seconds since the epoch) whose local wall clock reads `local`, earliest first.
    func instants(showing local: Int) -> [Int] {
        var found: Set<Int> = []
        for offset in offsets(near: local) where self.offset(at: local - offset) == offset {
            found.insert(local - offset)
        }
        return found.sorted()
    }

    /// For a wall-clock time that no instant shows: the first instant after the gap that skips it.
    func endOfGap(skipping local: Int) -> Int? {
        let candidates = offsets(near: local)
        guard let smallest = candidates.min(), let largest = candidates.max(), smallest < largest else { return nil }
        // Before the gap the clock shows less than `local`; from its end on, more.
        var low = local - largest
        var high = local - smallest
        guard localSeconds(at: low) < local, localSeconds(at: high) > local else { return nil }
        while high - low > 1 {
            let middle = (low + high) / 2
            if localSeconds(at: middle) < local { low = middle } else { high = middle }
        }
        return high
    }

    /// When `spec` next fires strictly after `start`.
    func nextFire(of spec: WallClockSpec, after start: Int) -> Int? {
        let firstDay = civilDay(at: start).adding(-1)
        for step in 0...(5 * 366) {
            let day = firstDay.adding(step)
            guard spec.matchesDay(day) else { continue }
            let local = day.number * 86_400 + spec.secondOfDay
            let fire: Int?
            if let first = instants(showing: local).first {
                fire = first
            } else {
                fire = endOfGap(skipping: local)
            }
            if let fire, fire > start { return fire }
        }
        return nil
    }

    /// The UTC offsets in force within a day either side of the wall-clock time `local`.
    private func offsets(near local: Int) -> Set<Int> {
        Set(stride(from: -30 * 3600, through: 30 * 3600, by: 1800).map { offset(at: local + $0) })
    }
}
