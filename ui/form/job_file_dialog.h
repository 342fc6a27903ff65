#pragma once
// The file dialogs of Load job… and Save job…. Ringmaster's own job files are named *.ringmaster.json: the
// package registers that glob as the MIME type application/x-ringmaster-job (packaging/ringmaster-mime.xml)
// and the desktop entry opens only that type, not every JSON file. So Save job… suggests
// job.ringmaster.json and adds ".ringmaster.json" to a name typed without a suffix; Load job… still shows
// every .json (a run directory's job.json, job files written before the name existed).

#include <QFileDialog>
#include <QString>

namespace ringmaster::ui {

inline constexpr const char* kJobFileSuffix = "ringmaster.json";         // QFileDialog::defaultSuffix: no dot
inline constexpr const char* kJobFileSuggestedName = "job.ringmaster.json";

// Sets DIALOG up to save a job file (AcceptSave) or to load one (AcceptOpen): title, filters, suffix.
void setUpJobFileDialog(QFileDialog& dialog, QFileDialog::AcceptMode mode);

} // namespace ringmaster::ui
