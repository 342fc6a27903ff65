// Opening Ringmaster's own job files (*.ringmaster.json, the MIME type the desktop entry claims): the
// window loads one into the form (what `ringmaster FILE` does), a bad one leaves the form as it was with the
// reason in the banner, the built app says it in one stderr line (and exits 2 with --start), and the Save
// job… dialog suggests the *.ringmaster.json name while Load job… still shows every .json.
#include <QAbstractButton>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QMessageBox>
#include <QScopeGuard>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "ui_test_support.h"
#include "supervisor/app_settings.h"
#include "ui/form/job_file_dialog.h"
#include "ui/form/input_pickers.h"
#include "ui/main_window.h"
#include "supervisor/program_checks.h"
#include "supervisor/run_supervisor.h"
#include "ui/form/script_fields.h"
#include "ui/form/trainer_note.h"
#include "supervisor/trusted_programs.h"

using namespace ringmaster;
using namespace ringmaster::ui;

using ringmaster::ui::test::writeFile;

namespace {

constexpr int kProcessTimeoutMs = 60000;
const char* const kNoNvml = "/nonexistent/libnvidia-ml.so.1";

// The programs remembered as chosen (trusted_programs.h) start empty: QSettings is in QStandardPaths' test folder.
void forgetChosenPrograms()
{
    QSettings settings(QLatin1String(supervisor::kSettingsOrganization), QLatin1String(supervisor::kSettingsApplication));
    settings.remove(QLatin1String(supervisor::kTrustedTrainersKey));
    settings.remove(QLatin1String(supervisor::kTrustedInterpretersKey));
    settings.sync();
}

// Clicks the button named BUTTON (its object name) in the next modal QMessageBox, if one comes within 10 s;
// *seen tells whether one came.
std::shared_ptr<bool> answerNextQuestion(const QString& button)
{
    auto seen = std::make_shared<bool>(false);
    auto* timer = new QTimer;
    auto elapsed = std::make_shared<QElapsedTimer>();
    elapsed->start();
    QObject::connect(timer, &QTimer::timeout, [timer, seen, elapsed, button] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            *seen = true;
            if (auto* target = box->findChild<QAbstractButton*>(button)) target->click();
        } else if (elapsed->elapsed() < 10000) {
            return;
        }
        timer->stop();
        timer->deleteLater();
    });
    timer->start(50);
    return seen;
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
        job.setTrainerOption(QStringLiteral("keep_best"), QStringLiteral("val_loss:max")); // not among the form's choices
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
        QCOMPARE(shown.trainer.value(QStringLiteral("keep_best")).toString(), QStringLiteral("val_loss:max"));
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

    // Issue 22's first way in: opening a job file ran the program it names (the form's probe ran its
    // launch.trainer_path, the interpreter check its launch.python) and the probe read the model it names.
    // Nothing a file names runs or is read before Start: the probe runs the app's own trainer, a job file's
    // interpreter path and TorchScript model wait for Start; Start then refuses the foreign trainer with the
    // name check's message. The stand-ins write a marker when run; the marker must never appear.
    void nothingAJobFileNamesRunsBeforeStart()
    {
        forgetChosenPrograms();
        const QByteArray savedTrainer = qgetenv("RINGMASTER_TRAINER");
        qputenv("RINGMASTER_TRAINER", qgetenv("RINGMASTER_REAL_TRAINER")); // the app's own trainer
        const auto restore = qScopeGuard([savedTrainer] { qputenv("RINGMASTER_TRAINER", savedTrainer); });
        QTemporaryDir dir;
        const QString marker = dir.filePath(QStringLiteral("RAN"));
        auto standIn = [&](const QString& path) {
            writeFile(path, QStringLiteral("#!/bin/sh\necho \"$0 $*\" >> '%1'\nexit 0\n").arg(marker).toUtf8());
            QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        };
        const QString pwn = dir.filePath(QStringLiteral("Downloads/pwn.sh"));
        QDir().mkpath(QFileInfo(pwn).absolutePath());
        standIn(pwn);
        const QString python = dir.filePath(QStringLiteral("bin/python3"));
        QDir().mkpath(QFileInfo(python).absolutePath());
        standIn(python);
        const QString model = dir.filePath(QStringLiteral("model.pt"));
        writeFile(model, "not read before Start");
        const QString runs = dir.filePath(QStringLiteral("runs"));

        const QString trainerJob = dir.filePath(QStringLiteral("trainer.ringmaster.json"));
        writeFile(trainerJob, QJsonDocument(QJsonObject{
            {QStringLiteral("version"), 1},
            {QStringLiteral("launch"), QJsonObject{{QStringLiteral("device"), QStringLiteral("cpu")}, {QStringLiteral("nproc"), 1},
                                                   {QStringLiteral("trainer_path"), pwn}, {QStringLiteral("output_root"), runs}}},
            {QStringLiteral("trainer"), QJsonObject{{QStringLiteral("model"), model}, {QStringLiteral("max_steps"), 1}}}}).toJson());
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        QVERIFY(window.openJobFile(trainerJob));
        JobForm* form = window.jobForm();
        QCOMPARE(form->heldInput(), model);
        QVERIFY(!form->isProbing()); // no probe scheduled: nothing will read the model
        QVERIFY2(form->modelNote()->text().contains(QStringLiteral("read only when you press Start")), qPrintable(form->modelNote()->text()));
        QTRY_VERIFY_WITH_TIMEOUT(!window.trainerNote()->isChecking(), kProcessTimeoutMs);
        QVERIFY2(window.trainerNote()->text().contains(QStringLiteral("The job names the trainer %1").arg(pwn)),
                 qPrintable(window.trainerNote()->text()));
        // Another model is the user's own choice: the probe runs, with the app's trainer.
        form->modelBox()->setModel(QStringLiteral("cnn"));
        QVERIFY(form->heldInput().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kProcessTimeoutMs);
        QVERIFY2(form->probeOutcome().answered(), qPrintable(form->probeOutcome().message));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kProcessTimeoutMs);
        QVERIFY(!QFile::exists(marker));
        // Start: pre-flight's name check refuses the file's trainer before running it.
        QVERIFY(window.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(!window.isCheckingStart(), kProcessTimeoutMs);
        QVERIFY2(window.banner()->text().contains(
                     QStringLiteral("\"launch.trainer_path\" %1 is not the trainer this installation runs").arg(pwn).toHtmlEscaped()),
                 qPrintable(window.banner()->text()));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Idle);

        // A script job whose interpreter is the stand-in: not run to check it, and said so.
        const QString script = dir.filePath(QStringLiteral("train.py"));
        writeFile(script, "print('hi')\n");
        const QString scriptJob = dir.filePath(QStringLiteral("script.ringmaster.json"));
        writeFile(scriptJob, QJsonDocument(QJsonObject{
            {QStringLiteral("version"), 1},
            {QStringLiteral("launch"), QJsonObject{{QStringLiteral("device"), QStringLiteral("cpu")}, {QStringLiteral("nproc"), 1},
                                                   {QStringLiteral("script"), script}, {QStringLiteral("python"), python},
                                                   {QStringLiteral("output_root"), runs}}}}).toJson());
        QVERIFY(window.openJobFile(scriptJob));
        QVERIFY(form->isScript());
        QVERIFY(!form->scriptFields()->isChecking()); // no interpreter check scheduled
        QVERIFY2(form->scriptFields()->interpreterNote()->text().contains(QStringLiteral("only when you press Start")),
                 qPrintable(form->scriptFields()->interpreterNote()->text()));
        QTRY_VERIFY_WITH_TIMEOUT(!form->isChecking(), kProcessTimeoutMs);
        QVERIFY(!QFile::exists(marker));
        QVERIFY(!QFileInfo::exists(runs));

        // Start asks before running an interpreter the user never chose; declined, nothing runs or is remembered.
        auto asked = answerNextQuestion(QStringLiteral("doNotRun"));
        QVERIFY(!window.startRun());
        QVERIFY(*asked);
        QVERIFY2(window.banner()->text().contains(QStringLiteral("was not confirmed")), qPrintable(window.banner()->text()));
        QVERIFY(!QFile::exists(marker));
        QVERIFY(supervisor::rememberedInterpreters().isEmpty());
        // Confirmed: remembered, and then run (pre-flight's torch check is its first run).
        asked = answerNextQuestion(QStringLiteral("runWithInterpreter"));
        QVERIFY(window.startRun());
        QVERIFY(*asked);
        QCOMPARE(supervisor::rememberedInterpreters(), QStringList{QFileInfo(python).canonicalFilePath()});
        QTRY_VERIFY_WITH_TIMEOUT(!window.isCheckingStart(), kProcessTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(marker), kProcessTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(window.supervisor()->state() == supervisor::RunState::Idle ||
                                     supervisor::isFinal(window.supervisor()->state()), kProcessTimeoutMs);
        // The next time, no question.
        asked = answerNextQuestion(QStringLiteral("doNotRun"));
        QVERIFY(window.startRun());
        QVERIFY(!*asked);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isCheckingStart(), kProcessTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kProcessTimeoutMs);
    }

    // "Choose trainer…": the chosen trainer is the job's, remembered, and a job file naming it afterwards is accepted.
    void aChosenTrainerIsRemembered()
    {
        forgetChosenPrograms();
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("mine/ringmaster-trainer"));
        QDir().mkpath(QFileInfo(copy).absolutePath());
        QVERIFY(QFile::copy(qEnvironmentVariable("RINGMASTER_REAL_TRAINER"), copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::ExeOwner);
        QVERIFY(!supervisor::isTrustedTrainer(copy));
        MainWindow window;
        window.setConfirmOnClose(false);
        window.useTrainer(copy);
        QCOMPARE(window.currentJob().trainerPath, copy);
        QVERIFY(!window.currentJob().trainerPathFromFile);
        QVERIFY2(window.trainerNote()->text().contains(QStringLiteral("runs the trainer you chose: %1").arg(copy)),
                 qPrintable(window.trainerNote()->text()));
        QVERIFY(supervisor::isTrustedTrainer(copy));
        supervisor::JobSpec fromFile;
        fromFile.trainerPath = copy;
        fromFile.trainerPathFromFile = true;
        QVERIFY(supervisor::checkTrainerProgram(fromFile, copy).isEmpty());
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
