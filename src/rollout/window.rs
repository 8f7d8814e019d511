//! Maintenance windows: weekly, in UTC, each opening on some days at `HH:MM` for a duration.

use jiff::civil::{Time, Weekday as CivilWeekday};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use super::policy::window_length;
use crate::api::class_rollout::{MaintenanceWindow, Weekday};

/// Whether Clusters may start rolling at `now`: no windows, or `now` inside one of them.
pub fn window_open(windows: &[MaintenanceWindow], now: Timestamp) -> Result<bool, String> {
    if windows.is_empty() {
        return Ok(true);
    }
    for (index, window) in windows.iter().enumerate() {
        if inside(window, now).map_err(|e| format!("spec.maintenanceWindows[{index}]: {e}"))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `now` falls in `window` (which may have opened up to a week before).
fn inside(window: &MaintenanceWindow, now: Timestamp) -> Result<bool, String> {
    let start: Time = window
        .start
        .parse()
        .map_err(|_| format!("start: Invalid value: {:?}: want HH:MM", window.start))?;
    let length = window_length(&window.duration).ok_or_else(|| {
        format!(
            "duration: Invalid value: {:?}: want a duration up to 168h",
            window.duration
        )
    })?;
    let today = now.to_zoned(TimeZone::UTC).date();
    for days_back in 0..=7 {
        let Ok(day) = today.checked_sub(jiff::Span::new().days(days_back)) else {
            continue;
        };
        if !window.days.is_empty() && !window.days.iter().any(|d| same_day(*d, day.weekday())) {
            continue;
        }
        let Ok(opens) = day.to_datetime(start).to_zoned(TimeZone::UTC) else {
            continue;
        };
        let opens = opens.timestamp();
        if opens <= now && now < opens.checked_add(length).unwrap_or(opens) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn same_day(day: Weekday, civil: CivilWeekday) -> bool {
    let civil_of = match day {
        Weekday::Mon => CivilWeekday::Monday,
        Weekday::Tue => CivilWeekday::Tuesday,
        Weekday::Wed => CivilWeekday::Wednesday,
        Weekday::Thu => CivilWeekday::Thursday,
        Weekday::Fri => CivilWeekday::Friday,
        Weekday::Sat => CivilWeekday::Saturday,
        Weekday::Sun => CivilWeekday::Sunday,
    };
    civil_of == civil
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(days: Vec<Weekday>, start: &str, duration: &str) -> MaintenanceWindow {
        MaintenanceWindow {
            days,
            start: start.into(),
            duration: duration.into(),
        }
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_window_is_open_from_its_start_for_its_duration_on_its_days() {
        // 2026-11-28 is a Saturday.
        let weekend = [window(vec![Weekday::Sat, Weekday::Sun], "22:00", "4h")];
        assert!(window_open(&weekend, at("2026-11-28T23:30:00Z")).unwrap());
        assert!(
            window_open(&weekend, at("2026-11-29T01:59:59Z")).unwrap(),
            "past midnight, opened Saturday"
        );
        assert!(!window_open(&weekend, at("2026-11-28T21:59:59Z")).unwrap());
        assert!(
            !window_open(&weekend, at("2026-11-30T23:00:00Z")).unwrap(),
            "Monday"
        );
        assert!(
            window_open(&[], at("2026-11-30T23:00:00Z")).unwrap(),
            "no window: always"
        );
        let daily = [window(vec![], "09:00", "1h")];
        assert!(window_open(&daily, at("2026-12-02T09:30:00Z")).unwrap());
    }

    #[test]
    fn a_bad_window_is_named() {
        let error = window_open(&[window(vec![], "25:00", "1h")], at("2026-11-28T00:00:00Z")).unwrap_err();
        assert!(
            error.starts_with("spec.maintenanceWindows[0]: start: Invalid value"),
            "{error}"
        );
        let error = window_open(&[window(vec![], "01:00", "200h")], at("2026-11-28T00:00:00Z")).unwrap_err();
        assert!(error.contains("duration"), "{error}");
    }
}
