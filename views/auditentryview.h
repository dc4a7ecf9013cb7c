#pragma once

#include <QWidget>

#include <string>

class QAbstractItemModel;
class QEvent;
class QLabel;
class QPlainTextEdit;
class QSplitter;
class QTableView;
class QTableWidget;

namespace idem::console {

// One audit entry as the live Audit page and the snapshot's Audit page show it: a title, the
// reason, and the before/after field diff with changed fields highlighted. Object names are
// prefix + "EntryTitle", "Reason" and "Diff".
class AuditEntryView : public QWidget {
    Q_OBJECT
public:
    explicit AuditEntryView(const QString& namePrefix, QWidget* parent = nullptr);
    ~AuditEntryView() override;

    QLabel* title() const { return m_title; }
    QPlainTextEdit* reason() const { return m_reason; }
    QTableWidget* diff() const { return m_diff; }

    void clearEntry();
    void showEntry(
        const QString& titleHtml, const QString& reason, const std::string& beforeImage, const std::string& afterImage);

    // The audit list's table: row selection, compact rows, the given column widths.
    static void setUpTable(
        QTableView* view, QAbstractItemModel* model, std::initializer_list<std::pair<int, int>> widths);
    // The list above the entry, half and half.
    static QSplitter* split(QTableView* view, AuditEntryView* entry);

protected:
    void changeEvent(QEvent* event) override;

private:
    QLabel* m_title;
    bool m_showing = false; // an entry is shown (its title is data, not a prompt)
    QPlainTextEdit* m_reason;
    QTableWidget* m_diff;
};

} // namespace idem::console
