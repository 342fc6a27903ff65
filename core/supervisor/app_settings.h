#pragma once
// Where the desktop app keeps its settings (QSettings: on Linux ~/.config/Ringmaster/ringmaster.conf, or
// under $XDG_CONFIG_HOME): the organisation and application names it runs under and the key of the last
// job it started. Shared because ringmaster-runs reads that job's output root as its default folder of
// runs (cli/runs_default_root.h), so the terminal lists the runs the app makes without being told where.

namespace ringmaster::supervisor {

inline constexpr const char* kSettingsOrganization = "Ringmaster";
inline constexpr const char* kSettingsApplication = "ringmaster";
// The last job the app started, as compact JSON (JobSpec::toJson); the app's form opens with it.
inline constexpr const char* kLastJobSettingsKey = "lastJob";

} // namespace ringmaster::supervisor
