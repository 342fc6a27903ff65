#include "ui/form/job_file_dialog.h"

#include <QCoreApplication>

namespace ringmaster::ui {

void setUpJobFileDialog(QFileDialog& dialog, QFileDialog::AcceptMode mode)
{
    const auto tr = [](const char* text) { return QCoreApplication::translate("JobFileDialog", text); };
    dialog.setAcceptMode(mode);
    if (mode == QFileDialog::AcceptSave) {
        dialog.setWindowTitle(tr("Save job"));
        dialog.setFileMode(QFileDialog::AnyFile);
        dialog.setNameFilters({tr("Ringmaster job files (*.ringmaster.json)"), tr("JSON files (*.json)")});
        dialog.setDefaultSuffix(QLatin1String(kJobFileSuffix));
        dialog.selectFile(QLatin1String(kJobFileSuggestedName));
    } else {
        dialog.setWindowTitle(tr("Load job"));
        dialog.setFileMode(QFileDialog::ExistingFile);
        dialog.setNameFilters({tr("Job files (*.ringmaster.json *.json)"), tr("All files (*)")});
    }
}

} // namespace ringmaster::ui
