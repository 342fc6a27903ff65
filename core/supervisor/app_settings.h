#pragma once
// Where the desktop app keeps its settings (QSettings: on Linux ~/.config/Ringmaster/ringmaster.conf, or
// under $XDG_CONFIG_HOME): the organisation and application names it runs under and the keys it uses.
// Shared because ringmaster-runs reads the last job's output root as its default folder of runs
// (cli/runs_default_root.h), and ringmaster-launch and the app both read and add to the programs the user
// has chosen (trusted_programs.h).

namespace ringmaster::supervisor {

inline constexpr const char* kSettingsOrganization = "Ringmaster";
inline constexpr const char* kSettingsApplication = "ringmaster";
// The last job the app started, as compact JSON (JobSpec::toJson); the app's form opens with it.
inline constexpr const char* kLastJobSettingsKey = "lastJob";
// Whether the app shows a desktop notification when a run completes, fails or hangs (default true).
inline constexpr const char* kDesktopNotificationsKey = "desktopNotifications";
// The trainers and interpreters the user has chosen (absolute paths, newest first): trusted_programs.h.
inline constexpr const char* kTrustedTrainersKey = "trustedTrainers";
inline constexpr const char* kTrustedInterpretersKey = "trustedInterpreters";

} // namespace ringmaster::supervisor
