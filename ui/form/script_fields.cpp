#include "ui/form/script_fields.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QToolButton>
#include <QtConcurrent>

#include "supervisor/metric_line_parser.h"

namespace ringmaster::ui {
namespace {

// A cold `import torch` takes seconds: check the interpreter once typing has paused.
constexpr int kInterpreterCheckDebounceMs = 400;
constexpr int kPatternRows = 2;
const char* const kNoteStyle = "color: #455a64;";
const char* const kErrorStyle = "color: #b00020;";

QWidget* withButton(QWidget* parent, QLineEdit* edit, QToolButton* button)
{
    auto* box = new QWidget(parent);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    layout->addWidget(button);
    return box;
}

QToolButton* browseButton(QWidget* parent, const QString& tip)
{
    auto* button = new QToolButton(parent);
    button->setText(QStringLiteral("…"));
    button->setToolTip(tip);
    return button;
}

} // namespace

ScriptFields::ScriptFields(QWidget* parent)
    : QGroupBox(tr("Your script"), parent)
{
    m_script = new QLineEdit(this);
    m_script->setPlaceholderText(tr("train.py"));
    m_script->setToolTip(tr("Your torchrun-style training script, run unchanged on every rank with torchrun's environment "
                            "(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, …)"));
    auto* browseScript = browseButton(this, tr("Choose the training script"));
    connect(browseScript, &QToolButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Training script"), QFileInfo(m_script->text()).absolutePath(),
                                                          tr("Python scripts (*.py);;All files (*)"));
        if (!path.isEmpty()) m_script->setText(path);
    });
    m_arguments = new QLineEdit(this);
    m_arguments->setPlaceholderText(tr("e.g. --epochs 10 --lr 3e-4"));
    m_arguments->setToolTip(tr("The script's own arguments, split as a shell would (quotes group words); no shell runs them"));
    m_python = new QLineEdit(QString::fromLatin1(supervisor::kDefaultPython), this);
    m_python->setToolTip(tr("The interpreter: a name on PATH or a path (e.g. a virtual environment's bin/python); "
                            "it must be able to import torch"));
    m_interpreterNote = new QLabel(this);
    m_interpreterNote->setWordWrap(true);
    m_interpreterNote->setTextFormat(Qt::PlainText);
    m_patterns = new QPlainTextEdit(this);
    m_patterns->setPlaceholderText(tr("one regular expression per line (default: name=value pairs)"));
    m_patterns->setToolTip(tr("Regular expressions for rank 0's output, one per line: each named group is a scalar, the group "
                              "'step' is the step (e.g. it (?<step>\\d+) loss (?<loss>[0-9.]+)); 'none' turns reading the output off"));
    m_patterns->setFixedHeight(m_patterns->fontMetrics().lineSpacing() * (kPatternRows + 1) + 2 * m_patterns->frameWidth());
    m_patterns->setTabChangesFocus(true);
    m_tensorboard = new QLineEdit(this);
    m_tensorboard->setPlaceholderText(tr("the run directory"));
    m_tensorboard->setToolTip(tr("The folder your script writes TensorBoard event files to: they are followed live, at any depth "
                                 "(default: the run directory, $RINGMASTER_RUN_DIR)"));
    auto* browseTensorBoard = browseButton(this, tr("Choose the TensorBoard folder"));
    connect(browseTensorBoard, &QToolButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("TensorBoard folder"), m_tensorboard->text());
        if (!dir.isEmpty()) m_tensorboard->setText(dir);
    });

    auto* form = new QFormLayout(this);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Script"), withButton(this, m_script, browseScript));
    form->addRow(tr("Arguments"), m_arguments);
    form->addRow(tr("Interpreter"), m_python);
    form->addRow(QString(), m_interpreterNote);
    form->addRow(tr("Metric patterns"), m_patterns);
    form->addRow(tr("TensorBoard folder"), withButton(this, m_tensorboard, browseTensorBoard));

    m_checkDebounce.setSingleShot(true);
    m_checkDebounce.setInterval(kInterpreterCheckDebounceMs);
    connect(&m_checkDebounce, &QTimer::timeout, this, [this] {
        m_checkInFlight = m_python->text().trimmed();
        m_checkWatcher.setFuture(QtConcurrent::run([python = m_checkInFlight] { return supervisor::checkScriptInterpreter(python); }));
    });
    connect(&m_checkWatcher, &QFutureWatcher<supervisor::PreflightResult>::finished, this, &ScriptFields::onChecked);
    connect(m_python, &QLineEdit::textChanged, this, &ScriptFields::scheduleCheck);
    for (auto* edit : {m_script, m_arguments, m_tensorboard}) connect(edit, &QLineEdit::textChanged, this, &ScriptFields::changed);
    connect(m_patterns, &QPlainTextEdit::textChanged, this, &ScriptFields::changed);
    showCheck();
}

void ScriptFields::setJob(const supervisor::JobSpec& job, bool fromFile)
{
    // A bare name is looked up on the user's own PATH; a path is whatever file the job file points at.
    m_heldPython = fromFile && job.python.contains(QLatin1Char('/')) ? job.python : QString();
    // Kept while the field shows it: Start then checks it against the interpreters the user has chosen.
    m_filePython = fromFile && job.pythonFromFile ? job.python : QString();
    m_script->setText(job.script);
    QStringList quoted;
    for (const QString& argument : job.scriptArgs) {
        // QProcess::splitCommand's rules: whitespace splits outside quotes, """ is a literal quote inside them.
        static const QRegularExpression needsQuotes(QStringLiteral("[\\s\"]"));
        const bool plain = !argument.isEmpty() && !argument.contains(needsQuotes);
        quoted << (plain ? argument : QLatin1Char('"') + QString(argument).replace(QLatin1Char('"'), QStringLiteral("\"\"\"")) + QLatin1Char('"'));
    }
    m_arguments->setText(quoted.join(QLatin1Char(' ')));
    m_python->setText(job.python);
    m_patterns->setPlainText(job.metricPatterns.join(QLatin1Char('\n')));
    m_tensorboard->setText(job.tensorboardDir);
}

QStringList ScriptFields::patterns() const
{
    QStringList lines;
    for (const QString& line : m_patterns->toPlainText().split(QLatin1Char('\n'))) {
        if (!line.trimmed().isEmpty()) lines << line; // a pattern keeps its own spaces
    }
    return lines;
}

void ScriptFields::apply(supervisor::JobSpec* job) const
{
    job->script = m_script->text().trimmed();
    job->scriptArgs = QProcess::splitCommand(m_arguments->text());
    job->python = m_python->text().trimmed();
    job->pythonFromFile = !m_filePython.isEmpty() && job->python == m_filePython;
    job->metricPatterns = patterns();
    job->tensorboardDir = m_tensorboard->text().trimmed();
}

void ScriptFields::setActive(bool active)
{
    m_active = active;
    scheduleCheck();
}

void ScriptFields::scheduleCheck()
{
    const QString python = m_python->text().trimmed();
    // Nothing to ask while unused, for an empty field, when the answer for this text is in, or for a job
    // file's interpreter the user has not chosen (pre-flight checks it at Start).
    m_checkPending = m_active && !python.isEmpty() && python != m_checkedFor && python != m_heldPython;
    if (m_checkPending) m_checkDebounce.start();
    else m_checkDebounce.stop();
    showCheck();
    Q_EMIT changed();
}

void ScriptFields::onChecked()
{
    if (m_checkInFlight != m_python->text().trimmed()) return; // the text changed since: a newer check follows
    m_checked = m_checkWatcher.result();
    m_checkedFor = m_checkInFlight;
    m_checkPending = m_checkDebounce.isActive();
    showCheck();
    Q_EMIT changed();
}

void ScriptFields::showCheck()
{
    const bool answered = !m_checkPending && m_checkedFor == m_python->text().trimmed() && !m_checkedFor.isEmpty();
    if (m_checkPending) {
        m_interpreterNote->setText(tr("checking that it can import torch…"));
        m_interpreterNote->setStyleSheet(QLatin1String(kNoteStyle));
    } else if (answered && m_checked.ok()) {
        m_interpreterNote->setText(tr("torch %1 · %2").arg(m_checked.torchVersion, m_checked.interpreterPath));
        m_interpreterNote->setStyleSheet(QLatin1String(kNoteStyle));
    } else if (answered) {
        m_interpreterNote->setText(m_checked.error);
        m_interpreterNote->setStyleSheet(QLatin1String(kErrorStyle));
    } else if (!m_heldPython.isEmpty() && m_python->text().trimmed() == m_heldPython) {
        m_interpreterNote->setText(tr("named by the job file: run (to check that it imports torch) only when you press Start, and only once you confirm it "
           "if you have not used it with Ringmaster before"));
        m_interpreterNote->setStyleSheet(QLatin1String(kNoteStyle));
    } else {
        m_interpreterNote->clear();
    }
    m_interpreterNote->setVisible(!m_interpreterNote->text().isEmpty());
}

QStringList ScriptFields::problems() const
{
    QStringList problems;
    const QString script = m_script->text().trimmed();
    if (script.isEmpty()) problems << tr("Choose your training script.");
    else if (!QFileInfo(script).isFile()) problems << tr("Script %1 does not exist.").arg(script);
    const QString python = m_python->text().trimmed();
    if (python.isEmpty()) problems << tr("Give the interpreter, e.g. python3.");
    else if (!m_checkPending && python == m_checkedFor && !m_checked.ok()) problems << m_checked.error;
    if (const QString bad = supervisor::MetricLineParser::checkPatterns(patterns()); !bad.isEmpty()) problems << bad;
    const QString tensorboard = m_tensorboard->text().trimmed();
    if (!tensorboard.isEmpty() && QFileInfo::exists(tensorboard) && !QFileInfo(tensorboard).isDir()) {
        problems << tr("TensorBoard folder %1 is a file: choose the folder your script writes its event files to.").arg(tensorboard);
    }
    return problems;
}

} // namespace ringmaster::ui
