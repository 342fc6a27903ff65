// Opening Ringmaster's own job files (*.ringmaster.json, the MIME type the desktop entry claims): the
// window loads one into the form (what `ringmaster FILE` does), a bad one leaves the form as it was with the
// reason in the banner, the built app says it in one stderr line (and exits 2 with --start), and the Save
// job… dialog suggests the *.ringmaster.json name while Load job… still shows every .json.
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "job_file_dialog.h"
#include "main_window.h"

using namespace ringmaster;
using namespace ringmaster::ui;

namespace {

constexpr int kProcessTimeoutMs = 60000;
const char* const kNoNvml = "/nonexistent/libnvidia-ml.so.1";

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
}

QByteArray compact(const supervisor::JobSpec& job)
{
    return QJsonDocument(job.toJson()).toJson(QJsonDocument::Compact);
}

} // namespace

class TestJobFileOpen : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", kNoNvml);
        QVERIFY(m_root.isValid());
    }

    // A job saved as NAME.ringmaster.json comes back into the form field by field.
    void goodFileFillsTheForm()
    {
        auto job = supervisor::defaultJob(0);
        job.nproc = 3;
        job.maxRestarts = 4;
        job.setTrainerOption(QStringLiteral("epochs"), 7);
        job.setTrainerOption(QStringLiteral("batch_size"), 40);
        const QString path = m_root.filePath(QStringLiteral("mnist sweep.ringmaster.json"));
        job.save(path);

        MainWindow window;
        window.setConfirmOnClose(false);
        QVERIFY(compact(window.currentJob()) != compact(job));
        QString error;
        QVERIFY(window.openJobFile(path, &error));
        QCOMPARE(error, QString());
        QVERIFY(!window.banner()->isVisibleTo(&window));
        const auto shown = window.currentJob();
        QCOMPARE(shown.nproc, 3);
        QCOMPARE(shown.maxRestarts, 4);
        QCOMPARE(shown.trainer.value(QStringLiteral("epochs")).toInt(), 7);
        QCOMPARE(shown.trainer.value(QStringLiteral("batch_size")).toInt(), 40);
    }

    void badFileLeavesTheFormAndSaysWhy_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        QTest::newRow("not JSON") << "cut.ringmaster.json" << QByteArray("{\"launch\": {\"nproc\": 2") << "is not valid JSON at offset";
        QTest::newRow("unknown key") << "typo.ringmaster.json" << QByteArray("{\"launch\": {\"nprocs\": 2}}") << "unknown key \"launch.nprocs\"";
        QTest::newRow("newer format") << "new.ringmaster.json" << QByteArray("{\"version\": 2}") << "job format version 2 is not supported";
        QTest::newRow("missing") << "gone.ringmaster.json" << QByteArray() << "cannot be read";
    }

    void badFileLeavesTheFormAndSaysWhy()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        const QString path = m_root.filePath(name);
        if (!bytes.isEmpty()) writeFile(path, bytes);

        MainWindow window;
        window.setConfirmOnClose(false);
        const QByteArray before = compact(window.currentJob());
        QString error;
        QVERIFY(!window.openJobFile(path, &error));
        QVERIFY2(error.contains(path) && error.contains(reason), qPrintable(error));
        QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable(error));
        QCOMPARE(compact(window.currentJob()), before);
        QVERIFY(window.banner()->isVisibleTo(&window));
        QVERIFY2(window.banner()->text().contains(error.toHtmlEscaped()), qPrintable(window.banner()->text()));
    }

    // The built app: a bad JOB file is one stderr line; with --start nothing starts and it exits 2.
    void appWithBadFileAndStartExits2WithOneLine()
    {
        const QString app = qEnvironmentVariable("RINGMASTER_GUI");
        QVERIFY2(QFile::exists(app), "RINGMASTER_GUI names the built ringmaster");
        const QString path = m_root.filePath(QStringLiteral("broken.ringmaster.json"));
        writeFile(path, "{\"launch\": [1, 2]}");
        QDir().mkpath(m_root.filePath(QStringLiteral("home")));
        QDir().mkpath(m_root.filePath(QStringLiteral("runtime")));   // Qt wants it, 0700, or warns on stderr
        QFile::setPermissions(m_root.filePath(QStringLiteral("runtime")), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);

        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("HOME"), m_root.filePath(QStringLiteral("home")));
        environment.insert(QStringLiteral("XDG_CONFIG_HOME"), m_root.filePath(QStringLiteral("home/.config")));
        environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), m_root.filePath(QStringLiteral("runtime")));
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        environment.insert(QStringLiteral("RINGMASTER_NVML_LIBRARY"), QString::fromLatin1(kNoNvml));
        process.setProcessEnvironment(environment);
        process.setWorkingDirectory(m_root.path());
        process.start(app, {path, QStringLiteral("--start")});
        QVERIFY(process.waitForFinished(kProcessTimeoutMs));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitCode(), 2);
        QCOMPARE(err, QStringLiteral("ringmaster: error: job file %1: \"launch\" must be an object\n").arg(path));
        QVERIFY(!QFile::exists(m_root.filePath(QStringLiteral("runs"))));
    }

    // Save job… suggests job.ringmaster.json, lists Ringmaster job files first and completes a bare name;
    // Load job… shows *.ringmaster.json and any other .json in its first filter.
    void dialogsDefaultToRingmasterJobFiles()
    {
        QFileDialog save;
        save.setOption(QFileDialog::DontUseNativeDialog);
        save.setDirectory(m_root.path());
        setUpJobFileDialog(save, QFileDialog::AcceptSave);
        QCOMPARE(save.acceptMode(), QFileDialog::AcceptSave);
        QCOMPARE(save.nameFilters().value(0), QStringLiteral("Ringmaster job files (*.ringmaster.json)"));
        QCOMPARE(save.defaultSuffix(), QStringLiteral("ringmaster.json"));
        QCOMPARE(QFileInfo(save.selectedFiles().value(0)).fileName(), QStringLiteral("job.ringmaster.json"));
        save.selectFile(QStringLiteral("sweep"));
        QCOMPARE(QFileInfo(save.selectedFiles().value(0)).fileName(), QStringLiteral("sweep.ringmaster.json"));

        QFileDialog open;
        open.setOption(QFileDialog::DontUseNativeDialog);
        setUpJobFileDialog(open, QFileDialog::AcceptOpen);
        QCOMPARE(open.acceptMode(), QFileDialog::AcceptOpen);
        QCOMPARE(open.fileMode(), QFileDialog::ExistingFile);
        QCOMPARE(open.nameFilters().value(0), QStringLiteral("Job files (*.ringmaster.json *.json)"));
        QCOMPARE(open.defaultSuffix(), QString());
    }

private:
    QTemporaryDir m_root;
};

QTEST_MAIN(TestJobFileOpen)
#include "tst_job_file_open.moc"
