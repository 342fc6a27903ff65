#include "ui/form/job_form.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonValue>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <utility>

#include "ui/form/form_widgets.h"
#include "ui/form/input_pickers.h"
#include "ui/form/job_options.h"
#include "supervisor/preflight.h"
#include "ui/form/script_fields.h"
#include "ui/form/slurm_fields.h"
#include "ui/form/trainer_option_fields.h"
#include "supervisor/trainer_flags.h"

namespace ringmaster::ui {
namespace {

// The trainer flags a probe needs (what it reads and builds), in the order they are passed.
const char* const kProbeKeys[] = {"model", "data", "val_data", "val_split", "label_column", "image_size",
                                  "loss", "normalize", "synthetic_samples", "batch_size"};
const char* const kNoteStyle = "color: #455a64;";
const char* const kWarningStyle = "color: #8a5300;";
const char* const kErrorStyle = "color: #b00020;";
// The kinds of job the form describes, in the order of its "Runs" box.
enum JobKind { kBuiltInTrainer = 0, kUserScript = 1 };
// Where the job runs, in the order of its "Where" box.
enum JobPlace { kThisMachine = 0, kSlurmCluster = 1 };
} // namespace

bool JobForm::isChecking() const
{
    return m_outputPending || (isScript() && m_script->isChecking()) || (isSlurm() && m_slurm->isListing());
}

bool JobForm::isSlurm() const
{
    return m_where->currentIndex() == kSlurmCluster;
}

int JobForm::worldSize() const
{
    return isSlurm() ? m_slurm->worldSize() : m_worldSize;
}

void JobForm::showWhere()
{
    const bool slurm = isSlurm();
    m_slurm->setVisible(slurm);
    m_slurm->setActive(slurm);
    setApplies(m_maxRestarts, !slurm, tr("Not used under Slurm: Ringmaster does not restart a Slurm job"));
    // Under Slurm the trainer's heartbeats reach this machine over TCP and are watched; a script's tasks send none.
    setApplies(m_heartbeat, !slurm || !isScript(),
               tr("Not used under Slurm for a script: its tasks send no heartbeats (they are followed through their logs)"));
}

bool JobForm::isScript() const
{
    return m_kind->currentIndex() == kUserScript;
}

void JobForm::showKind()
{
    const bool script = isScript();
    m_script->setVisible(script);
    m_script->setActive(script);
    m_trainerModel->setVisible(!script);
    m_trainerSchedule->setVisible(!script);
    m_more->setVisible(!script);
    // Evaluation and checkpoints are the trainer's; a script does its own. Step timing is the trainer's too.
    for (QWidget* trainerOnly : {static_cast<QWidget*>(m_evalEvery), static_cast<QWidget*>(m_checkpointEvery),
                                 static_cast<QWidget*>(m_keepCheckpoints), static_cast<QWidget*>(m_keepBest),
                                 static_cast<QWidget*>(m_stragglerAfter)}) { // a script's steps are not timed
        m_outputForm->setRowVisible(trainerOnly, !script);
    }
}

void JobForm::setWorldSize(int ranks)
{
    m_worldSize = ranks;
    revalidate();
}

void JobForm::scheduleOutputCheck()
{
    // The result for older text must not count: pending until the check for this text is back.
    m_outputPending = !m_output->text().trimmed().isEmpty();
    if (m_outputPending) m_outputDebounce.start();
    else m_outputDebounce.stop();
    revalidate();
}

void JobForm::checkOutputNow()
{
    m_outputInFlight = m_output->text().trimmed();
    // checkOutputFolder creates and removes a probe file: off the GUI thread (a slow or hung mount).
    m_outputWatcher.setFuture(QtConcurrent::run([folder = m_outputInFlight] { return supervisor::checkOutputFolder(folder); }));
}

void JobForm::onOutputChecked()
{
    if (m_outputInFlight != m_output->text().trimmed()) return; // the text changed since: a newer check follows
    m_outputChecked = m_outputInFlight;
    m_outputProblem = m_outputWatcher.result();
    m_outputPending = m_outputDebounce.isActive();
    revalidate();
}

QString JobForm::datasetProblem(const QString& data, bool* dataAtFault)
{
    *dataAtFault = false;
    // The trainer's own count once its probe has answered for these fields (after any hold-out).
    qint64 samples = m_probeOutcome.trainSamples();
    if (samples < 0) {
        // Meanwhile the count the form can read itself: the built-in sets and an IDX folder's header.
        if (m_validation->mode() == ValidationField::Mode::HoldOut || (!isBuiltinData(data) && !isIdxFolder(data))) return {};
        const qint64 synthetic = integerOption(m_base.trainer, "synthetic_samples", optionDefaultInteger("synthetic_samples"));
        const QString key = data + QLatin1Char('\n') + QString::number(synthetic);
        if (key != m_sizeFor) { // reads a file header for a folder: once per dataset, not per keystroke elsewhere
            m_size = trainingSetSize(data, synthetic);
            m_sizeFor = key;
        }
        *dataAtFault = m_size.samples < 0;
        if (*dataAtFault) return tr("Dataset: %1.").arg(m_size.error);
        samples = m_size.samples;
    }
    if (worldSize() < 1 || m_batch->value() < 1) return {};
    const qint64 shard = shardSize(samples, worldSize(), boolOption(m_base.trainer, "drop_last"));
    if (m_batch->value() <= shard) return {};
    return tr("Batch per rank %1 is larger than each rank's shard of %2 samples (%3 training samples over %4 ranks): "
              "use at most %2.").arg(m_batch->value()).arg(shard).arg(samples).arg(worldSize());
}

void JobForm::revalidate()
{
    QStringList problems;
    bool badBatch = m_batch->value() < 1;
    if (badBatch) problems << tr("Batch per rank must be at least 1.");
    bool lrOk = false;
    const double lr = m_lr->text().trimmed().toDouble(&lrOk);
    const bool badLr = !lrOk || !(lr > 0);
    if (badLr) problems << tr("Learning rate must be a number above 0 (e.g. 0.01 or 3e-4).");
    mark(m_lr, badLr);
    if (worldSize() < 1) problems << tr("No ranks: select at least one GPU, or set CPU ranks to 1 or more.");
    const QString output = m_output->text().trimmed();
    QString outputProblem;
    if (output.isEmpty()) outputProblem = tr("Choose an output folder.");
    else if (!m_outputPending && output == m_outputChecked) outputProblem = m_outputProblem;
    if (!outputProblem.isEmpty()) problems << tr("Output folder: %1").arg(outputProblem);
    mark(m_output, !outputProblem.isEmpty());

    const bool badHeartbeat = !isScript() && m_heartbeat->value() <= kHangDetectionOff;
    if (badHeartbeat) problems << tr("Heartbeat timeout must be above 0 s for the built-in trainer (off is for scripts).");
    mark(m_heartbeat, badHeartbeat);
    if (isSlurm()) problems << m_slurm->problems();
    if (isScript()) {
        problems << m_script->problems();
        requestProbe(false); // the trainer's probe describes the trainer's model and data only
        finishValidation(problems);
        return;
    }

    // What the form can tell at once; the trainer's probe checks the rest.
    const QString data = m_data->currentText().trimmed();
    const QString model = m_model->model();
    const bool linear = model == QLatin1String("linear");
    bool badData = false;
    if (data.isEmpty()) {
        problems << tr("Choose the training data: fashion-mnist, synthetic, a folder or a file.");
        badData = true;
    } else if (isBuiltinData(data) && linear != (data == QLatin1String("synthetic"))) {
        problems << (linear ? tr("The linear model trains on the synthetic dataset.")
                            : tr("The synthetic dataset is for the linear model."));
        badData = true;
    } else if (!isBuiltinData(data) && !QFileInfo::exists(data)) {
        problems << tr("Training data %1 does not exist.").arg(data);
        badData = true;
    }
    bool badModel = m_model->isFile() && !QFileInfo(model).isFile();
    if (badModel) problems << tr("Model file %1 does not exist.").arg(model);
    const QString validation = m_validation->pathEdit()->text().trimmed();
    const bool badValidation = m_validation->mode() == ValidationField::Mode::Path && !QFileInfo::exists(validation);
    if (badValidation) {
        problems << (validation.isEmpty() ? tr("Validation: choose a file or folder, or None.")
                                          : tr("Validation data %1 does not exist.").arg(validation));
    }
    const QString imageSize = m_imageSize->text().trimmed();
    const bool badImageSize = !imageSize.isEmpty() && !validImageSize(imageSize);
    if (badImageSize) problems << tr("Image size must be H,W in pixels (e.g. 32,32), or empty to keep each image's size.");
    m_labelColumn->setEnabled(isCsv(data));

    requestProbe(!badData && !badModel && !badValidation && !badImageSize && !badBatch);
    if (m_probeOutcome.kind == ProbeOutcome::Kind::Rejected) {
        problems << m_probeOutcome.message;
        (m_probeOutcome.concernsModel() ? badModel : badData) = true;
    }
    if (!badData) {
        bool dataAtFault = false;
        if (const QString problem = datasetProblem(data, &dataAtFault); !problem.isEmpty()) {
            problems << problem;
            badData = dataAtFault;
            badBatch = !dataAtFault;
        }
    }
    mark(m_data, badData);
    mark(m_model, badModel);
    mark(m_validation->pathEdit(), badValidation);
    mark(m_imageSize, badImageSize);
    mark(m_batch, badBatch);
    m_momentum->setEnabled(m_optimizer->currentText() == QLatin1String("sgd"));
    m_globalBatch->setText(tr("global %1 (%2 × %3 ranks)").arg(qint64(m_batch->value()) * std::max(worldSize(), 0))
                               .arg(m_batch->value()).arg(worldSize()));
    finishValidation(problems);
}

void JobForm::finishValidation(const QStringList& problems)
{
    m_problemLabel->setText(problems.join(QLatin1Char('\n')));
    m_problemLabel->setVisible(!problems.isEmpty());
    if (problems != m_problems || isValid() != m_lastValid || isChecking() != m_lastPending) {
        m_problems = problems;
        m_lastValid = isValid();
        m_lastPending = isChecking();
        Q_EMIT validityChanged(m_lastValid, m_problems);
    }
}

QStringList JobForm::probeArguments() const
{
    // The flags the run itself would get, from the job the form describes (unset ones are absent).
    const supervisor::JobSpec described = job(QStringLiteral("cpu"), 1, {});
    QStringList arguments;
    for (const char* key : kProbeKeys) {
        const QJsonValue value = described.trainer.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull()) continue;
        arguments << supervisor::trainerFlagOf(QLatin1String(key)) << supervisor::flagValueText(value);
    }
    arguments << QStringLiteral("--probe");
    return arguments;
}

QString JobForm::heldInput() const
{
    for (const QString& shown : {m_model->model(), m_data->currentText().trimmed(), m_validation->pathEdit()->text().trimmed()}) {
        if (!shown.isEmpty() && m_heldInputs.contains(shown)) return shown;
    }
    return {};
}

void JobForm::requestProbe(bool inputsChecked)
{
    QStringList key;
    // The trainer the app found itself, never a job file's trainer_path (that one is checked at Start).
    if (inputsChecked && heldInput().isEmpty()) key = QStringList{supervisor::locateTrainer(supervisor::JobSpec{})} + probeArguments();
    if (key == m_probeKey) return; // an edit elsewhere (the world size, the learning rate): the answer stands
    m_probeKey = key;
    m_probe->cancel();
    m_probeOutcome = {};
    m_probePending = !key.isEmpty();
    if (m_probePending) m_probeDebounce.start();
    else m_probeDebounce.stop();
    showProbe();
}

void JobForm::onProbed(const ProbeOutcome& outcome)
{
    m_probeOutcome = outcome;
    m_probePending = false;
    showProbe();
    revalidate();
}

void JobForm::showProbe()
{
    auto show = [](QLabel* note, const QString& text, const char* style) {
        note->setText(text);
        note->setStyleSheet(QLatin1String(style));
        note->setVisible(!text.isEmpty());
    };
    const ProbeOutcome& outcome = m_probeOutcome;
    if (const QString held = heldInput(); !held.isEmpty()) {
        const bool model = held == m_model->model();
        const QString note = tr("%1 is named by the job file: read only when you press Start (a TorchScript model or a "
                                "tensor file runs code of its own in LibTorch)")
                                 .arg(QFileInfo(held).fileName());
        show(m_modelNote, model ? note : QString(), kNoteStyle);
        show(m_dataNote, model ? QString() : note, kNoteStyle);
    } else if (m_probePending) {
        show(m_modelNote, tr("checking…"), kNoteStyle);
        show(m_dataNote, tr("checking…"), kNoteStyle);
    } else if (outcome.answered()) {
        show(m_modelNote, modelSummary(outcome.report.value(QStringLiteral("model")).toObject()), kNoteStyle);
        show(m_dataNote, dataSummary(outcome.report.value(QStringLiteral("data")).toObject()), kNoteStyle);
    } else if (outcome.kind == ProbeOutcome::Kind::Rejected) {
        show(m_modelNote, outcome.concernsModel() ? outcome.message : QString(), kErrorStyle);
        show(m_dataNote, outcome.concernsModel() ? QString() : outcome.message, kErrorStyle);
    } else {
        show(m_modelNote, QString(), kNoteStyle);
        show(m_dataNote, outcome.message, outcome.kind == ProbeOutcome::Kind::Unsupported ? kNoteStyle : kWarningStyle);
    }
}

void JobForm::setJob(const supervisor::JobSpec& job, JobSource source)
{
    m_base = job;
    const QJsonObject& t = job.trainer;
    m_heldInputs.clear();
    if (source == JobSource::File) {
        // A TorchScript model runs its own operators and a tensor file goes through LibTorch's unpickler: a
        // file from someone else that names one is read at Start, not by the probe. Folders (IDX, images) and
        // CSV tables are data, and the app's own trainer may read them now.
        const QString model = textOption(t, "model", QString());
        if (!model.isEmpty() && !isBuiltinModel(model)) m_heldInputs << model;
        for (const char* key : {"data", "val_data"}) {
            const QString path = textOption(t, key, QString());
            if (!path.isEmpty() && !isBuiltinData(path) && !QFileInfo(path).isDir() && !isCsv(path)) m_heldInputs << path;
        }
    }
    m_script->setJob(job, source == JobSource::File);
    m_model->setModel(textOption(t, "model", optionDefaultText("model")));
    m_data->setCurrentText(textOption(t, "data", optionDefaultText("data")));
    const QString validation = textOption(t, "val_data", QString());
    const double holdOut = realOption(t, "val_split", 0);
    m_validation->pathEdit()->setText(validation);
    if (holdOut > 0) m_validation->fractionBox()->setValue(holdOut);
    m_validation->setMode(!validation.isEmpty() ? ValidationField::Mode::Path
                          : holdOut > 0         ? ValidationField::Mode::HoldOut
                                                : ValidationField::Mode::None);
    m_labelColumn->setText(textOption(t, "label_column", QString()));
    m_imageSize->setText(textOption(t, "image_size", QString()));
    m_loss->setCurrentText(optionDefaultText("loss")); // unless the job names a loss this list has
    m_loss->setCurrentText(textOption(t, "loss", optionDefaultText("loss")));
    // Each field at the job's value, else at the option's default (the option table, trainer_option_fields.h).
    for (const auto& [box, key] : {std::pair{m_epochs, "epochs"}, {m_maxSteps, "max_steps"}, {m_batch, "batch_size"},
                                  {m_warmup, "warmup_steps"}, {m_seed, "seed"}, {m_evalEvery, "eval_every"},
                                  {m_checkpointEvery, "checkpoint_every"}, {m_keepCheckpoints, "keep_checkpoints"}}) {
        box->setValue(static_cast<int>(integerOption(t, key, optionDefaultInteger(key))));
    }
    m_lr->setText(textOption(t, "lr", optionDefaultText("lr")));
    m_momentum->setValue(realOption(t, "momentum", optionDefaultReal("momentum")));
    m_weightDecay->setValue(realOption(t, "weight_decay", optionDefaultReal("weight_decay")));
    for (const auto& [box, key] : {std::pair{m_optimizer, "optimizer"}, {m_schedule, "lr_schedule"}, {m_precision, "precision"}}) {
        box->setCurrentText(textOption(t, key, optionDefaultText(key)));
    }
    m_more->setJob(t);
    const QString keepBest = textOption(t, "keep_best", optionDefaultText("keep_best"));
    if (m_keepBest->findText(keepBest) < 0) m_keepBest->addItem(keepBest); // a rule of the job file's own, kept
    m_keepBest->setCurrentText(keepBest);
    m_output->setText(job.outputRoot);
    m_maxRestarts->setValue(job.maxRestarts);
    m_heartbeat->setValue(job.isScript() && !job.heartbeatTimeoutGiven ? kHangDetectionOff : job.heartbeatTimeoutSec);
    m_stragglerAfter->setValue(job.stragglerAfterSec);
    m_slurm->setJob(job);
    m_kind->setCurrentIndex(job.isScript() ? kUserScript : kBuiltInTrainer);
    m_where->setCurrentIndex(job.slurm.enabled ? kSlurmCluster : kThisMachine);
    showKind();
    showWhere();
    // What the widgets show now (after their ranges and decimals) stands for the loaded values.
    m_loadedValues = shownValues();
    m_sizeFor.clear(); // synthetic_samples may differ
    scheduleOutputCheck(); // also when the folder text is unchanged: the disk may have changed
}

QWidget* JobForm::fieldOfTrainerOption(const QString& key) const
{
    for (const Field& field : m_fields) {
        if (field.trainerKey == key) return field.widget;
    }
    return nullptr;
}

QJsonValue JobForm::valueOf(const QWidget* widget) const
{
    if (widget == m_lr) {
        bool ok = false;
        const double lr = m_lr->text().trimmed().toDouble(&ok);
        return ok ? QJsonValue(lr) : QJsonValue(m_lr->text().trimmed());
    }
    if (widget == m_data) return m_data->currentText().trimmed();
    if (widget == m_model) return m_model->model();
    // Unset (undefined) values are not written: a job without them stays without them.
    const QJsonValue unset(QJsonValue::Undefined);
    const auto mode = m_validation->mode();
    const QString text = qobject_cast<const QLineEdit*>(widget) ? static_cast<const QLineEdit*>(widget)->text().trimmed() : QString();
    if (widget == m_validation->pathEdit()) return mode == ValidationField::Mode::Path && !text.isEmpty() ? QJsonValue(text) : unset;
    if (widget == m_validation->fractionBox()) return mode == ValidationField::Mode::HoldOut ? QJsonValue(m_validation->fractionBox()->value()) : unset;
    if (widget == m_labelColumn) return isCsv(m_data->currentText().trimmed()) && !text.isEmpty() ? QJsonValue(text) : unset;
    if (widget == m_imageSize) return text.isEmpty() ? unset : QJsonValue(text);
    if (widget == m_loss) return m_loss->currentText() == optionDefaultText("loss") ? unset : QJsonValue(m_loss->currentText());
    if (m_more->owns(widget)) return m_more->valueOf(widget);
    if (widget == m_output) return m_output->text().trimmed();
    if (const auto* box = qobject_cast<const QSpinBox*>(widget)) return QJsonValue(qint64(box->value()));
    if (const auto* box = qobject_cast<const QDoubleSpinBox*>(widget)) return box->value();
    if (const auto* box = qobject_cast<const QComboBox*>(widget)) return box->currentText();
    return {};
}

QList<QJsonValue> JobForm::shownValues() const
{
    QList<QJsonValue> values;
    for (const auto& field : m_fields) values.append(valueOf(field.widget));
    return values;
}

supervisor::JobSpec JobForm::job(const QString& device, int cpuRanks, const QList<int>& gpus) const
{
    supervisor::JobSpec job = m_base;
    job.device = device;
    job.gpus = gpus;
    job.nproc = device == QLatin1String("cuda") ? static_cast<int>(gpus.size()) : cpuRanks;
    if (isSlurm()) m_slurm->apply(&job);   // the allocation decides: not this machine's GPUs
    else job.slurm = {};
    const QList<QJsonValue> values = shownValues();
    if (isScript()) {
        m_script->apply(&job);
        job.trainer = QJsonObject(); // the trainer's flags are not a script's
        job.outputRoot = m_output->text().trimmed();
        job.maxRestarts = m_maxRestarts->value();
        job.heartbeatTimeoutGiven = m_heartbeat->value() > kHangDetectionOff;
        if (job.heartbeatTimeoutGiven) job.heartbeatTimeoutSec = m_heartbeat->value();
        return job;
    }
    // A built-in job: none of a script's settings, and when the loaded job was a script, every field as shown
    // (its trainer section was empty, so "untouched" would leave the trainer's own defaults, not the form's).
    const bool fromScript = job.isScript();
    job.script.clear();
    job.scriptArgs.clear();
    job.python = QString::fromLatin1(supervisor::kDefaultPython);
    job.metricPatterns.clear();
    job.tensorboardDir.clear();
    if (fromScript) job.heartbeatTimeoutGiven = true;
    for (int i = 0; i < m_fields.size(); ++i) {
        if (!fromScript && i < m_loadedValues.size() && values.at(i) == m_loadedValues.at(i)) continue; // untouched: the loaded value stands
        const Field& field = m_fields.at(i);
        if (!field.trainerKey.isEmpty() && values.at(i).isUndefined()) job.trainer.remove(field.trainerKey);
        else if (!field.trainerKey.isEmpty()) job.setTrainerOption(field.trainerKey, values.at(i));
        else if (field.widget == m_output) job.outputRoot = values.at(i).toString();
        else if (field.widget == m_maxRestarts) job.maxRestarts = m_maxRestarts->value();
        else if (field.widget == m_heartbeat) job.heartbeatTimeoutSec = m_heartbeat->value();
        else if (field.widget == m_stragglerAfter) job.stragglerAfterSec = m_stragglerAfter->value();
    }
    return job;
}

} // namespace ringmaster::ui
