#include "job_form.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonValue>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "preflight.h"

namespace ringmaster::ui {
namespace {

QSpinBox* spin(QWidget* parent, int min, int max, int value, const QString& tip)
{
    auto* box = new QSpinBox(parent);
    box->setRange(min, max);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QDoubleSpinBox* doubleSpin(QWidget* parent, double min, double max, double value, int decimals, const QString& tip)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(min, max);
    box->setDecimals(decimals);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QComboBox* combo(QWidget* parent, const QStringList& items, const QString& tip)
{
    auto* box = new QComboBox(parent);
    box->addItems(items);
    box->setToolTip(tip);
    return box;
}

} // namespace

JobForm::JobForm(QWidget* parent)
    : QWidget(parent)
{
    m_model = combo(this, {QStringLiteral("cnn"), QStringLiteral("mlp"), QStringLiteral("linear")},
                    tr("Built-in model: cnn (2 conv + 2 linear), mlp (784-256-10), linear (10-input regression on synthetic data)"));
    m_data = combo(this, {QStringLiteral("fashion-mnist"), QStringLiteral("synthetic")},
                   tr("fashion-mnist (the Debian package), synthetic (for linear), or a folder of MNIST-format IDX files"));
    m_data->setEditable(true);
    auto* browse = new QPushButton(tr("…"), this);
    browse->setToolTip(tr("Choose a folder of MNIST-format IDX files"));
    browse->setMaximumWidth(32);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Dataset folder"));
        if (!dir.isEmpty()) m_data->setCurrentText(dir);
    });
    m_epochs = spin(this, 1, 100000, 1, tr("Passes over the training set"));
    m_maxSteps = spin(this, 0, 100000000, 0, tr("Stop after this many optimizer steps (0: no limit besides epochs)"));
    m_batch = spin(this, 0, 1000000, 64, tr("Samples per rank per step; the global batch is this times the number of ranks"));
    m_globalBatch = new QLabel(this);
    m_globalBatch->setToolTip(tr("Samples per optimizer step across all ranks"));
    m_lr = new QLineEdit(QStringLiteral("0.01"), this);
    m_lr->setToolTip(tr("Peak learning rate (e.g. 0.01 or 3e-4); must be > 0"));
    m_optimizer = combo(this, {QStringLiteral("sgd"), QStringLiteral("adam"), QStringLiteral("adamw")}, tr("Optimizer"));
    m_momentum = doubleSpin(this, 0, 0.999, 0.9, 3, tr("SGD momentum (ignored by Adam/AdamW)"));
    m_weightDecay = doubleSpin(this, 0, 1, 0, 5, tr("Weight decay (L2 for SGD/Adam, decoupled for AdamW)"));
    m_schedule = combo(this, {QStringLiteral("constant"), QStringLiteral("step"), QStringLiteral("cosine")},
                       tr("Learning-rate schedule after warm-up: constant, step (x0.1 every epoch), cosine (to 0 at the end)"));
    m_warmup = spin(this, 0, 10000000, 0, tr("Linear warm-up steps from 0 to the learning rate"));
    m_seed = spin(this, 0, 2147483647, 42, tr("Seed for initialisation and the per-epoch shuffle (DistributedSampler semantics)"));
    m_evalEvery = spin(this, 0, 100000, 1, tr("Evaluate on the test split every N epochs (0: only at the end)"));
    m_checkpointEvery = spin(this, 0, 100000000, 0, tr("Write a checkpoint every N steps (0: at the end of each epoch)"));
    m_keepCheckpoints = spin(this, 1, 1000, 3, tr("How many checkpoints to keep (oldest are removed)"));
    m_output = new QLineEdit(QStringLiteral("runs"), this);
    m_output->setToolTip(tr("Folder where each run gets its own time-stamped run directory"));
    auto* browseOut = new QPushButton(tr("…"), this);
    browseOut->setMaximumWidth(32);
    browseOut->setToolTip(tr("Choose the output folder"));
    connect(browseOut, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Output folder"), m_output->text());
        if (!dir.isEmpty()) m_output->setText(dir);
    });
    m_maxRestarts = spin(this, 0, 100, 0, tr("After a failure, restart the group from the latest checkpoint up to N times"));
    m_heartbeat = doubleSpin(this, 1, 86400, 120, 0, tr("A rank silent for this many seconds is reported hung and the group is stopped"));
    m_heartbeat->setSuffix(tr(" s"));

    auto row = [this](QWidget* a, QWidget* b) {
        auto* box = new QWidget(this);
        auto* layout = new QHBoxLayout(box);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(a, 1);
        layout->addWidget(b);
        return box;
    };
    auto* model = new QGroupBox(tr("Model and data"), this);
    auto* modelForm = new QFormLayout(model);
    modelForm->addRow(tr("Model"), m_model);
    modelForm->addRow(tr("Dataset"), row(m_data, browse));
    auto* schedule = new QGroupBox(tr("Training"), this);
    auto* scheduleForm = new QFormLayout(schedule);
    scheduleForm->addRow(tr("Epochs"), m_epochs);
    scheduleForm->addRow(tr("Max steps"), m_maxSteps);
    scheduleForm->addRow(tr("Batch per rank"), row(m_batch, m_globalBatch));
    scheduleForm->addRow(tr("Learning rate"), m_lr);
    scheduleForm->addRow(tr("Optimizer"), m_optimizer);
    scheduleForm->addRow(tr("Momentum"), m_momentum);
    scheduleForm->addRow(tr("Weight decay"), m_weightDecay);
    scheduleForm->addRow(tr("LR schedule"), m_schedule);
    scheduleForm->addRow(tr("Warm-up steps"), m_warmup);
    scheduleForm->addRow(tr("Seed"), m_seed);
    auto* outputs = new QGroupBox(tr("Evaluation, checkpoints, output"), this);
    auto* outputForm = new QFormLayout(outputs);
    outputForm->addRow(tr("Eval every (epochs)"), m_evalEvery);
    outputForm->addRow(tr("Checkpoint every (steps)"), m_checkpointEvery);
    outputForm->addRow(tr("Keep checkpoints"), m_keepCheckpoints);
    outputForm->addRow(tr("Output folder"), row(m_output, browseOut));
    outputForm->addRow(tr("Max restarts"), m_maxRestarts);
    outputForm->addRow(tr("Heartbeat timeout"), m_heartbeat);
    m_problemLabel = new QLabel(this);
    m_problemLabel->setWordWrap(true);
    m_problemLabel->setStyleSheet(QStringLiteral("color: #b00020;"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(model);
    layout->addWidget(schedule);
    layout->addWidget(outputs);
    layout->addWidget(m_problemLabel);
    layout->addStretch(1);

    for (auto* box : {m_epochs, m_maxSteps, m_batch, m_warmup, m_seed, m_evalEvery, m_checkpointEvery, m_keepCheckpoints, m_maxRestarts}) {
        connect(box, &QSpinBox::valueChanged, this, &JobForm::revalidate);
    }
    for (auto* box : {m_momentum, m_weightDecay, m_heartbeat}) connect(box, &QDoubleSpinBox::valueChanged, this, &JobForm::revalidate);
    for (auto* box : {m_model, m_optimizer, m_schedule}) connect(box, &QComboBox::currentTextChanged, this, &JobForm::revalidate);
    connect(m_data, &QComboBox::currentTextChanged, this, &JobForm::revalidate);
    connect(m_lr, &QLineEdit::textChanged, this, &JobForm::revalidate);
    connect(m_output, &QLineEdit::textChanged, this, &JobForm::revalidate);
    revalidate();
}

void JobForm::setWorldSize(int ranks)
{
    m_worldSize = ranks;
    revalidate();
}

void JobForm::mark(QWidget* widget, bool bad)
{
    widget->setStyleSheet(bad ? QStringLiteral("border: 2px solid #d62728; border-radius: 3px;") : QString());
}

void JobForm::revalidate()
{
    QStringList problems;
    const bool badBatch = m_batch->value() < 1;
    if (badBatch) problems << tr("Batch per rank must be at least 1.");
    mark(m_batch, badBatch);
    bool lrOk = false;
    const double lr = m_lr->text().trimmed().toDouble(&lrOk);
    const bool badLr = !lrOk || !(lr > 0);
    if (badLr) problems << tr("Learning rate must be a number above 0 (e.g. 0.01 or 3e-4).");
    mark(m_lr, badLr);
    if (m_worldSize < 1) problems << tr("No ranks: select at least one GPU, or set CPU ranks to 1 or more.");
    const QString outputProblem = m_output->text().trimmed().isEmpty() ? tr("Choose an output folder.")
                                                                          : supervisor::checkOutputFolder(m_output->text().trimmed());
    if (!outputProblem.isEmpty()) problems << tr("Output folder: %1").arg(outputProblem);
    mark(m_output, !outputProblem.isEmpty());
    const QString data = m_data->currentText().trimmed();
    const bool linear = m_model->currentText() == QLatin1String("linear");
    bool badData = false;
    if (linear != (data == QLatin1String("synthetic"))) {
        problems << (linear ? tr("The linear model trains on the synthetic dataset.")
                            : tr("The synthetic dataset is for the linear model."));
        badData = true;
    } else if (data != QLatin1String("fashion-mnist") && data != QLatin1String("synthetic") && !QDir(data).exists()) {
        problems << tr("Dataset folder %1 does not exist.").arg(data);
        badData = true;
    }
    mark(m_data, badData);
    m_momentum->setEnabled(m_optimizer->currentText() == QLatin1String("sgd"));
    m_globalBatch->setText(tr("global %1 (%2 × %3 ranks)").arg(m_batch->value() * std::max(m_worldSize, 0))
                               .arg(m_batch->value()).arg(m_worldSize));
    m_problemLabel->setText(problems.join(QLatin1Char('\n')));
    m_problemLabel->setVisible(!problems.isEmpty());
    if (problems != m_problems) {
        m_problems = problems;
        Q_EMIT validityChanged(m_problems.isEmpty(), m_problems);
    }
}

void JobForm::setJob(const supervisor::JobSpec& job)
{
    auto option = [&job](const char* key, const QString& fallback) {
        return job.trainerOption(QString::fromLatin1(key), fallback);
    };
    m_model->setCurrentText(option("model", QStringLiteral("cnn")));
    m_data->setCurrentText(option("data", QStringLiteral("fashion-mnist")));
    m_epochs->setValue(option("epochs", QStringLiteral("1")).toInt());
    m_maxSteps->setValue(option("max_steps", QStringLiteral("0")).toInt());
    m_batch->setValue(option("batch_size", QStringLiteral("64")).toInt());
    m_lr->setText(option("lr", QStringLiteral("0.01")));
    m_optimizer->setCurrentText(option("optimizer", QStringLiteral("sgd")));
    m_momentum->setValue(option("momentum", QStringLiteral("0.9")).toDouble());
    m_weightDecay->setValue(option("weight_decay", QStringLiteral("0")).toDouble());
    m_schedule->setCurrentText(option("lr_schedule", QStringLiteral("constant")));
    m_warmup->setValue(option("warmup_steps", QStringLiteral("0")).toInt());
    m_seed->setValue(option("seed", QStringLiteral("42")).toInt());
    m_evalEvery->setValue(option("eval_every", QStringLiteral("1")).toInt());
    m_checkpointEvery->setValue(option("checkpoint_every", QStringLiteral("0")).toInt());
    m_keepCheckpoints->setValue(option("keep_checkpoints", QStringLiteral("3")).toInt());
    m_output->setText(job.outputRoot);
    m_maxRestarts->setValue(job.maxRestarts);
    m_heartbeat->setValue(job.heartbeatTimeoutSec);
    revalidate();
}

supervisor::JobSpec JobForm::job(const QString& device, int cpuRanks, const QList<int>& gpus) const
{
    supervisor::JobSpec job = supervisor::defaultJob(0);
    job.device = device;
    job.gpus = gpus;
    job.nproc = device == QLatin1String("cuda") ? static_cast<int>(gpus.size()) : cpuRanks;
    job.outputRoot = m_output->text().trimmed();
    job.maxRestarts = m_maxRestarts->value();
    job.heartbeatTimeoutSec = m_heartbeat->value();
    job.trainer = {};
    job.setTrainerOption(QStringLiteral("model"), m_model->currentText());
    job.setTrainerOption(QStringLiteral("data"), m_data->currentText().trimmed());
    job.setTrainerOption(QStringLiteral("epochs"), m_epochs->value());
    job.setTrainerOption(QStringLiteral("max_steps"), m_maxSteps->value());
    job.setTrainerOption(QStringLiteral("batch_size"), m_batch->value());
    job.setTrainerOption(QStringLiteral("lr"), m_lr->text().trimmed().toDouble());
    job.setTrainerOption(QStringLiteral("optimizer"), m_optimizer->currentText());
    job.setTrainerOption(QStringLiteral("momentum"), m_optimizer->currentText() == QLatin1String("sgd") ? m_momentum->value() : 0.9);
    job.setTrainerOption(QStringLiteral("weight_decay"), m_weightDecay->value());
    job.setTrainerOption(QStringLiteral("lr_schedule"), m_schedule->currentText());
    job.setTrainerOption(QStringLiteral("warmup_steps"), m_warmup->value());
    job.setTrainerOption(QStringLiteral("seed"), m_seed->value());
    job.setTrainerOption(QStringLiteral("eval_every"), m_evalEvery->value());
    job.setTrainerOption(QStringLiteral("checkpoint_every"), m_checkpointEvery->value());
    job.setTrainerOption(QStringLiteral("keep_checkpoints"), m_keepCheckpoints->value());
    return job;
}

} // namespace ringmaster::ui
