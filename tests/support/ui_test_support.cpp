#include "ui_test_support.h"

#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QWidget>

#include "ui/form/job_form.h"
#include "ui/main_window.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/runs_panel.h"

namespace ringmaster::ui::test {

QString writeFile(const QString& path, const QByteArray& bytes, bool executable)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) {
        QTest::qFail(qPrintable(QStringLiteral("cannot write %1: %2").arg(path, file.errorString())), __FILE__, __LINE__);
        return {};
    }
    file.close();
    if (executable) file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
    return path;
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

void screenshot(QWidget& widget, const char* name)
{
    const QString dir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR");
    if (!dir.isEmpty()) widget.grab().save(dir + QLatin1Char('/') + QLatin1String(name));
}

bool waitForFinal(MainWindow& window, int timeoutMs)
{
    return QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, timeoutMs);
}

bool settled(JobForm& form, int timeoutMs)
{
    return QTest::qWaitFor([&] { return !form.isChecking(); }, timeoutMs);
}

bool refreshAndWait(RunsPanel& panel, int timeoutMs)
{
    QSignalSpy spy(&panel, &RunsPanel::refreshed);
    panel.refresh();
    return spy.wait(timeoutMs) || !spy.isEmpty();
}

QString statusOf(const RunsPanel& panel, const QString& runDir, int column)
{
    const int row = panel.model()->rowOf(runDir);
    return row < 0 ? QString() : panel.model()->index(row, column < 0 ? RunsModel::Status : column).data().toString();
}

} // namespace ringmaster::ui::test
