#include "ui/form/program_choice.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>

#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"
#include "supervisor/trusted_programs.h"

namespace ringmaster::ui {

bool confirmFileInterpreter(QWidget* parent, const supervisor::JobSpec& job)
{
    if (!job.isScript() || !job.pythonFromFile) return true;
    const QString resolved = supervisor::locateInterpreter(job.python);
    // A missing interpreter is pre-flight's to report; a trusted one needs no question.
    if (resolved.isEmpty() || supervisor::isTrustedInterpreter(resolved)) return true;
    const QString target = QFileInfo(resolved).canonicalFilePath();
    QMessageBox box(QMessageBox::Warning, QObject::tr("Run the script with this interpreter?"),
                    QObject::tr("The job file runs your script with %1 (%2), an interpreter you have not used with Ringmaster "
                                "on this machine. A job file may come from someone else: run it only if you know this program.")
                        .arg(job.python, target.isEmpty() ? resolved : target),
                    QMessageBox::NoButton, parent);
    QPushButton* run = box.addButton(QObject::tr("Run with it"), QMessageBox::AcceptRole);
    run->setObjectName(QStringLiteral("runWithInterpreter"));
    QPushButton* refuse = box.addButton(QObject::tr("Do not run"), QMessageBox::RejectRole);
    refuse->setObjectName(QStringLiteral("doNotRun"));
    box.setDefaultButton(refuse);
    box.exec();
    if (box.clickedButton() != run) return false;
    supervisor::rememberInterpreter(resolved);
    return true;
}

QString askForTrainer(QWidget* parent)
{
    return QFileDialog::getOpenFileName(parent, QObject::tr("Choose the ringmaster-trainer to run"), QString(),
                                        QObject::tr("ringmaster-trainer (ringmaster-trainer*);;All files (*)"));
}

} // namespace ringmaster::ui
