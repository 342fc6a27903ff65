#pragma once
// The job form's pickers for what a run trains on, kept out of the form itself:
//   ModelBox: the built-in models plus "Model file…", which asks for a TorchScript file; the picked
//     file stays in the list (by name, its path in the tooltip) and is the trainer's --model value.
//   PathBrowseButton: "…" with a menu of Folder… and File…, since data can be either.
//   ValidationField: None / Hold out a fraction / a file or folder (the trainer's --val-split and
//     --val-data), showing only the input the chosen mode needs.
// Also what the form needs to know about the data these pick (a built-in name, CSV, an image size).
// Each picker emits one signal when its value changes, so the form re-checks once per edit.

#include <QComboBox>
#include <QToolButton>
#include <QWidget>

#include <functional>

class QDoubleSpinBox;
class QLineEdit;

namespace ringmaster::ui {

// The trainer's built-in data names (fashion-mnist, synthetic), as opposed to a path.
bool isBuiltinData(const QString& data);
// The trainer's built-in models (cnn, mlp, linear), as opposed to a TorchScript file's path.
bool isBuiltinModel(const QString& model);
// Data read from a CSV file, where a label column can be named.
bool isCsv(const QString& data);
// --image-size text: H,W with both above zero.
bool validImageSize(const QString& text);

class ModelBox : public QComboBox
{
    Q_OBJECT

public:
    explicit ModelBox(QWidget* parent = nullptr);

    // A built-in name (cnn, mlp, linear) or a model file's path.
    QString model() const;
    void setModel(const QString& model);
    bool isFile() const;
    // What "Model file…" asks (a file dialog by default); an empty answer keeps the current model.
    void setFileChooser(std::function<QString()> chooser) { m_chooser = std::move(chooser); }
    int chooseFileIndex() const { return count() - 1; }

Q_SIGNALS:
    void modelChanged(const QString& model);

private:
    void onIndexChanged(int index);

    std::function<QString()> m_chooser;
    int m_fileIndex = -1;   // the picked file's entry, -1 when none
    int m_previous = 0;     // the entry to return to when the file dialog is cancelled
    QString m_lastModel;
};

class PathBrowseButton : public QToolButton
{
    Q_OBJECT

public:
    // `fileFilter` as QFileDialog takes it; `start` gives the folder to open the dialogs in.
    PathBrowseButton(const QString& what, const QString& fileFilter, std::function<QString()> start, QWidget* parent = nullptr);

Q_SIGNALS:
    void picked(const QString& path);
};

class ValidationField : public QWidget
{
    Q_OBJECT

public:
    enum class Mode { None, HoldOut, Path };

    explicit ValidationField(const QString& fileFilter, QWidget* parent = nullptr);

    Mode mode() const;
    void setMode(Mode mode);
    QComboBox* modeBox() const { return m_mode; }
    QDoubleSpinBox* fractionBox() const { return m_fraction; }
    QLineEdit* pathEdit() const { return m_path; }

Q_SIGNALS:
    void changed();

private:
    void showMode();

    QComboBox* m_mode;
    QDoubleSpinBox* m_fraction;
    QLineEdit* m_path;
    QWidget* m_pathRow;
};

} // namespace ringmaster::ui
