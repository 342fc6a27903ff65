#include "ui/form/input_pickers.h"

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenu>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "ui/form/trainer_option_fields.h"

namespace ringmaster::ui {
namespace {

// A long file name must not widen the panel: the combo boxes size to this many characters at least.
constexpr int kComboMinimumCharacters = 12;
constexpr double kDefaultHoldOut = 0.1;
constexpr double kMinHoldOut = 0.001;
constexpr double kMaxHoldOut = 0.999; // the trainer takes 0 <= F < 1; 0 is "None"
constexpr double kHoldOutStep = 0.05;
constexpr int kHoldOutDecimals = 3;

// The trainer's built-in models, in the order the model box lists them (the option table's, its default first).
const QStringList& builtinModels()
{
    static const QStringList names = optionChoices("model");
    return names;
}

} // namespace

bool isBuiltinData(const QString& data)
{
    return optionChoices("data").contains(data);
}

bool isCsv(const QString& data)
{
    return data.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive);
}

bool validImageSize(const QString& text)
{
    static const QRegularExpression pattern(QStringLiteral("^\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*$"));
    const auto match = pattern.match(text);
    return match.hasMatch() && match.captured(1).toLongLong() > 0 && match.captured(2).toLongLong() > 0;
}

bool isBuiltinModel(const QString& model)
{
    return builtinModels().contains(model);
}

ModelBox::ModelBox(QWidget* parent)
    : QComboBox(parent)
{
    addItems(builtinModels());
    addItem(tr("Model file…"));
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(kComboMinimumCharacters);
    setToolTip(tr("Built-in model: cnn (2 conv + 2 linear), mlp (784-256-10), linear (10-input regression on synthetic data); "
                  "or Model file… for your own TorchScript model (torch.jit.script(model).save(\"model.pt\"))"));
    m_chooser = [this] {
        return QFileDialog::getOpenFileName(this, tr("TorchScript model"), QString(),
                                            tr("TorchScript models (*.pt *.pth *.torchscript *.zip);;All files (*)"));
    };
    m_lastModel = model();
    connect(this, &QComboBox::currentIndexChanged, this, &ModelBox::onIndexChanged);
}

bool ModelBox::isFile() const
{
    return m_fileIndex >= 0 && currentIndex() == m_fileIndex;
}

QString ModelBox::model() const
{
    return isFile() ? itemData(m_fileIndex).toString() : currentText();
}

void ModelBox::setModel(const QString& model)
{
    const int builtin = findText(model);
    if (model.isEmpty() || (builtin >= 0 && builtin < static_cast<int>(builtinModels().size()))) {
        setCurrentIndex(std::max(builtin, 0));
        return;
    }
    if (m_fileIndex < 0) {
        const QSignalBlocker quiet(this); // inserting before "Model file…" is not a choice
        m_fileIndex = chooseFileIndex();
        insertItem(m_fileIndex, QString());
    }
    setItemText(m_fileIndex, QFileInfo(model).fileName());
    setItemData(m_fileIndex, model);
    setItemData(m_fileIndex, model, Qt::ToolTipRole);
    if (currentIndex() == m_fileIndex) onIndexChanged(m_fileIndex); // another file in the same entry
    else setCurrentIndex(m_fileIndex);
}

void ModelBox::onIndexChanged(int index)
{
    if (index == chooseFileIndex()) {
        const QString path = m_chooser ? m_chooser() : QString();
        if (!path.isEmpty()) {
            setModel(path);
        } else {
            const QSignalBlocker quiet(this); // cancelled: back to what it was, nothing changed
            setCurrentIndex(m_previous);
        }
        return;
    }
    m_previous = index;
    const QString now = model();
    if (now == m_lastModel) return;
    m_lastModel = now;
    Q_EMIT modelChanged(now);
}

PathBrowseButton::PathBrowseButton(const QString& what, const QString& fileFilter, std::function<QString()> start, QWidget* parent)
    : QToolButton(parent)
{
    setText(tr("…"));
    setToolTip(tr("Choose the %1: a folder or a file").arg(what));
    setPopupMode(QToolButton::InstantPopup);
    setStyleSheet(QStringLiteral("QToolButton::menu-indicator { image: none; width: 0px; }")); // "…" already says "more"
    auto* menu = new QMenu(this);
    menu->addAction(tr("Folder…"), this, [this, what, start] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("%1 folder").arg(what), start());
        if (!dir.isEmpty()) Q_EMIT picked(dir);
    });
    menu->addAction(tr("File…"), this, [this, what, fileFilter, start] {
        const QString file = QFileDialog::getOpenFileName(this, tr("%1 file").arg(what), start(), fileFilter);
        if (!file.isEmpty()) Q_EMIT picked(file);
    });
    setMenu(menu);
}

ValidationField::ValidationField(const QString& fileFilter, QWidget* parent)
    : QWidget(parent)
    , m_mode(new QComboBox(this))
    , m_fraction(new QDoubleSpinBox(this))
    , m_path(new QLineEdit(this))
    , m_pathRow(new QWidget(this))
{
    m_mode->addItem(tr("Data's own"), int(Mode::None));
    m_mode->addItem(tr("Hold out"), int(Mode::HoldOut));
    m_mode->addItem(tr("File or folder"), int(Mode::Path));
    m_mode->setToolTip(tr("Validation data: the data's own test split if it has one (IDX folders' t10k files, the "
                          "built-in sets; other data then has none), a fraction of the training data held out "
                          "(--val-split), or a file or folder of the same kind as the training data (--val-data)"));
    m_fraction->setRange(kMinHoldOut, kMaxHoldOut);
    m_fraction->setDecimals(kHoldOutDecimals);
    m_fraction->setSingleStep(kHoldOutStep);
    m_fraction->setValue(kDefaultHoldOut);
    m_fraction->setToolTip(tr("Fraction of the training data held out for validation (e.g. 0.2); the rest is trained on"));
    m_path->setPlaceholderText(tr("validation folder or file"));
    m_path->setToolTip(tr("A folder (IDX files, or one sub-folder of images per class) or a .pt/.pth/.csv file"));
    auto* browse = new PathBrowseButton(tr("validation data"), fileFilter, [this] { return m_path->text(); }, m_pathRow);
    connect(browse, &PathBrowseButton::picked, m_path, &QLineEdit::setText);

    auto* pathLayout = new QHBoxLayout(m_pathRow);
    pathLayout->setContentsMargins(0, 0, 0, 0);
    pathLayout->addWidget(m_path, 1);
    pathLayout->addWidget(browse);
    auto* top = new QHBoxLayout;
    top->addWidget(m_mode);
    top->addWidget(m_fraction);
    top->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_pathRow);

    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] {
        showMode();
        Q_EMIT changed();
    });
    connect(m_fraction, &QDoubleSpinBox::valueChanged, this, &ValidationField::changed);
    connect(m_path, &QLineEdit::textChanged, this, &ValidationField::changed);
    showMode();
}

ValidationField::Mode ValidationField::mode() const
{
    return static_cast<Mode>(m_mode->currentData().toInt());
}

void ValidationField::setMode(Mode mode)
{
    m_mode->setCurrentIndex(m_mode->findData(int(mode)));
}

void ValidationField::showMode()
{
    m_fraction->setVisible(mode() == Mode::HoldOut);
    m_pathRow->setVisible(mode() == Mode::Path);
}

} // namespace ringmaster::ui
