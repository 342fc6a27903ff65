#include "ui/runs/run_actions.h"

#include "runs/run_liveness.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>

#include "runs/checkpoint_list.h"
#include "ui/runs/checkpoint_picker.h"
#include "ui/runs/export_job.h"
#include "runs/run_files.h"
#include "ui/charts/run_plot.h"
#include "runs/run_record.h"
#include "runs/scalar_table.h"
#include "runs/system_table.h"

namespace ringmaster::ui {
namespace {

// Every run's scalars and system metrics, as `ringmaster-runs export` reads them (all run directories checked first).
QList<runs::ScalarRecord> readScalars(const QStringList& runDirs, QPromise<ExportOutcome>& promise)
{
    for (const QString& run : runDirs) runs::requireRunDirectory(run);
    promise.setProgressRange(0, static_cast<int>(runDirs.size()) + 1);
    QList<runs::ScalarRecord> records;
    int done = 0;
    for (const QString& run : runDirs) {
        records += runs::readRunScalars(run).records;
        records += runs::readRunSystem(run).records; // system/rank<R>/<name>, as ringmaster-runs export
        promise.setProgressValue(++done);
    }
    return records;
}

QString fileName(const QString& path) { return QDir::toNativeSeparators(path); }

} // namespace

RunActions::RunActions(std::function<QStringList()> selection, std::function<QString()> activeRun, QWidget* parent)
    : QWidget(parent)
    , m_selection(std::move(selection))
    , m_activeRun(std::move(activeRun))
    , m_runner(new ExportRunner(this))
    , m_button(new QPushButton(tr("Actions"), this))
    , m_menu(new QMenu(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_button);
    m_button->setMenu(m_menu);
    m_button->setToolTip(tr("Resume, new job, and exports of the selected runs"));
    m_resume = m_menu->addAction(tr("Resume from checkpoint…"), this, &RunActions::resumeSelected);
    m_resume->setToolTip(tr("Continue a stopped or failed run in its own folder from a checkpoint you pick"));
    m_newJob = m_menu->addAction(tr("New job from this run"), this, [this] { Q_EMIT newJobRequested(m_selection().value(0)); });
    m_newJob->setToolTip(tr("Fill the job form with this run's job.json"));
    m_menu->addSeparator();
    m_scalars = m_menu->addAction(tr("Export scalars (CSV/JSON)…"), this, &RunActions::exportScalarsSelected);
    m_bundle = m_menu->addAction(tr("Bundle…"), this, &RunActions::bundleSelected);
    m_chart = m_menu->addAction(tr("Chart image (PNG/SVG/PDF)…"), this, &RunActions::chartSelected);
    m_copyModel = m_menu->addAction(tr("Copy model.pt…"), this, &RunActions::copyModelSelected);
    m_copyCheckpoint = m_menu->addAction(tr("Copy a checkpoint…"), this, &RunActions::copyCheckpointSelected);
    m_menu->setToolTipsVisible(true);
    connect(m_menu, &QMenu::aboutToShow, this, &RunActions::updateMenu);   // the selection is read when it opens
}

void RunActions::updateMenu()
{
    const QStringList selected = m_selection();
    const bool one = selected.size() == 1;
    const QStringList exported = exportedRuns();
    const bool ticked = m_ticked && !m_ticked().isEmpty();
    const int count = static_cast<int>(exported.size());
    m_scalars->setText(ticked ? tr("Export scalars of the %n ticked run(s) (CSV/JSON)…", nullptr, count)
                              : tr("Export scalars of the %n selected run(s) (CSV/JSON)…", nullptr, count));
    m_chart->setText(ticked ? tr("Chart image of the %n ticked run(s) (PNG/SVG/PDF)…", nullptr, count)
                            : tr("Chart image of the %n selected run(s) (PNG/SVG/PDF)…", nullptr, count));
    const QString refusal = one ? resumeRefusal(selected.first()) : tr("Select one run");
    m_resume->setEnabled(refusal.isEmpty());
    m_resume->setToolTip(refusal.isEmpty() ? tr("Continue the run in its own folder from a checkpoint you pick") : refusal);
    m_newJob->setEnabled(one && QFileInfo::exists(selected.first() + QLatin1Char('/') + QLatin1String(runs::kJobFile)));
    m_scalars->setEnabled(!exported.isEmpty());
    m_bundle->setEnabled(one);
    m_chart->setEnabled(!exported.isEmpty());
    m_copyModel->setEnabled(one && QFileInfo::exists(selected.first() + QLatin1Char('/') + QLatin1String(runs::kModelFile)));
    m_copyCheckpoint->setEnabled(one && !runs::listRunCheckpoints(selected.first()).isEmpty());
}

QStringList RunActions::exportedRuns() const
{
    const QStringList ticked = m_ticked ? m_ticked() : QStringList();
    return ticked.isEmpty() ? m_selection() : ticked;
}

QString RunActions::resumeRefusal(const QString& runDir) const
{
    if (QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()) == QDir::cleanPath(m_activeRun())) return tr("This run is running now");
    if (!QFileInfo::exists(runDir + QLatin1Char('/') + QLatin1String(runs::kJobFile))) return tr("This run has no job.json to resume with");
    runs::RunRecord record = runs::readRunRecord(runDir);
    runs::applyRunLiveness(&record);   // another launcher or window may be running it now
    if (record.status == QLatin1String(runs::kStatusRunning)) return tr("This run is being run now by another launcher or window");
    if (record.status == QLatin1String("completed")) return tr("This run completed: use New job from this run to train more");
    if (runs::listRunCheckpoints(runDir).isEmpty()) return tr("This run has no checkpoint to resume from");
    return {};
}

void RunActions::resumeSelected()
{
    const QString run = m_selection().value(0);
    const QString refusal = resumeRefusal(run);
    if (!refusal.isEmpty()) {
        QMessageBox::information(this, tr("Resume"), refusal);
        return;
    }
    const QString checkpoint = CheckpointPicker::pick(this, run, CheckpointPicker::Purpose::Resume);
    if (!checkpoint.isEmpty()) Q_EMIT resumeRequested(run, checkpoint);
}

QString RunActions::askSavePath(const QString& title, const QString& suggested, const QString& filter)
{
    if (m_askSavePath) return m_askSavePath(title, suggested, filter);
    // The runner asks before replacing (once, for every path): the dialog does not ask too.
    return QFileDialog::getSaveFileName(this, title, suggested, filter, nullptr, QFileDialog::DontConfirmOverwrite);
}

void RunActions::exportScalarsSelected()
{
    const QStringList runs = exportedRuns();
    if (runs.isEmpty()) return;
    const QString path = askSavePath(tr("Export scalars"), QStringLiteral("scalars.csv"), tr("CSV (*.csv);;JSON (*.json)"));
    if (path.isEmpty()) return;
    const bool json = path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
    exportScalars(runs, path, json ? runs::ExportFormat::Json : runs::ExportFormat::Csv);
}

void RunActions::bundleSelected()
{
    const QString run = m_selection().value(0);
    QDialog options(this);
    options.setWindowTitle(tr("Bundle"));
    auto* form = new QFormLayout(&options);
    auto* checkpoints = new QCheckBox(tr("Include checkpoints/"), &options);
    auto* model = new QCheckBox(tr("Include model.pt"), &options);
    form->addRow(checkpoints);
    form->addRow(model);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &options);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &options, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &options, &QDialog::reject);
    if (options.exec() != QDialog::Accepted) return;
    const QString path = askSavePath(tr("Bundle"), QFileInfo(run).fileName() + QStringLiteral(".tar.gz"), tr("Bundles (*.tar.gz *.tgz)"));
    if (path.isEmpty()) return;
    exportBundle(run, path, {checkpoints->isChecked(), model->isChecked()});
}

void RunActions::chartSelected()
{
    const QStringList runs = exportedRuns();
    if (runs.isEmpty()) return;
    QDialog options(this);
    options.setWindowTitle(tr("Chart image"));
    auto* form = new QFormLayout(&options);
    auto* width = new QSpinBox(&options);
    auto* height = new QSpinBox(&options);
    width->setRange(200, 10000);
    height->setRange(150, 10000);
    width->setValue(RunPlotOptions::kDefaultWidth);
    height->setValue(RunPlotOptions::kDefaultHeight);
    width->setSuffix(tr(" px"));
    height->setSuffix(tr(" px"));
    form->addRow(tr("Width"), width);
    form->addRow(tr("Height"), height);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &options);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &options, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &options, &QDialog::reject);
    if (options.exec() != QDialog::Accepted) return;
    const QString path = askSavePath(tr("Chart image"), QStringLiteral("chart.png"), tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (path.isEmpty()) return;
    exportChart(runs, path, QSize(width->value(), height->value()));
}

void RunActions::copyModelSelected()
{
    const QString run = m_selection().value(0);
    const QString path = askSavePath(tr("Copy model.pt"), QFileInfo(run).fileName() + QStringLiteral("-model.pt"), tr("Weights (*.pt)"));
    if (!path.isEmpty()) copyOut(run + QLatin1Char('/') + QLatin1String(runs::kModelFile), path);
}

void RunActions::copyCheckpointSelected()
{
    const QString run = m_selection().value(0);
    const QString checkpoint = CheckpointPicker::pick(this, run, CheckpointPicker::Purpose::Copy);
    if (checkpoint.isEmpty()) return;
    const QString path = askSavePath(tr("Copy checkpoint"), QFileInfo(run).fileName() + QLatin1Char('-') + QFileInfo(checkpoint).fileName(),
                                     tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) copyOut(checkpoint, path);
}

bool RunActions::exportScalars(const QStringList& runDirs, const QString& path, runs::ExportFormat format)
{
    return m_runner->start(tr("Export scalars"), path, [runDirs, path, format](QPromise<ExportOutcome>& promise) {
        const auto records = readScalars(runDirs, promise);
        runs::writeScalars(records, path, format);
        promise.setProgressValue(static_cast<int>(runDirs.size()) + 1);
        return ExportOutcome{true, QObject::tr("wrote %1 scalars of %2 runs to %3").arg(records.size()).arg(runDirs.size()).arg(fileName(path)), {}};
    });
}

bool RunActions::exportBundle(const QString& runDir, const QString& path, const runs::BundleOptions& options)
{
    return m_runner->start(tr("Bundle"), path, [runDir, path, options](QPromise<ExportOutcome>&) {
        if (!path.endsWith(QStringLiteral(".tar.gz")) && !path.endsWith(QStringLiteral(".tgz"))) {
            throw runs::RunsError(QObject::tr("%1: a bundle is a gzip-compressed tar: name it FILE.tar.gz").arg(fileName(path)));
        }
        const auto result = runs::writeRunBundle(runDir, path, options);
        return ExportOutcome{true, QObject::tr("wrote %1 (%2 files, %3 bytes)").arg(fileName(path)).arg(result.files).arg(result.bytes), {}};
    });
}

bool RunActions::exportChart(const QStringList& runDirs, const QString& path, const QSize& size)
{
    return m_runner->start(tr("Chart image"), path, [runDirs, path, size](QPromise<ExportOutcome>& promise) {
        if (!plotFormatOf(path)) throw runs::RunsError(QObject::tr("%1: name the image .png, .svg or .pdf").arg(fileName(path)));
        auto records = readScalars(runDirs, promise);
        // Drawing needs widgets: the GUI thread does it once the scalars are read.
        return ExportOutcome{true, {}, [records = std::move(records), path, size] {
            RunPlotOptions options;
            options.size = size;
            const auto result = writeRunPlot(records, path, options);
            return QObject::tr("wrote %1 (%2 panels)").arg(fileName(path)).arg(result.panels.size());
        }};
    });
}

bool RunActions::copyOut(const QString& file, const QString& path)
{
    if (QFileInfo(file).absoluteFilePath() == QFileInfo(path).absoluteFilePath()) {
        return false;   // copying a file onto itself would replace it with a copy in progress
    }
    return m_runner->start(tr("Copy"), path, [file, path](QPromise<ExportOutcome>& promise) {
        ExportRunner::copyFileAtomically(file, path, &promise);
        return ExportOutcome{true, QObject::tr("copied %1 to %2").arg(fileName(file), fileName(path)), {}};
    });
}

} // namespace ringmaster::ui
