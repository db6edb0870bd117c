"""The main window and what hangs on it directly: status bar, window state, welcome page, help, error dialog, search
panel, server menu, daily features, load progress; the sidebar (``sidebar``; its list widget, rows and the drag of a
chat row: ``chat_list``; the folder dialogs: ``folder_dialogs``); the chat pane (``chat_pane``: the welcome page or
the message list, made after the first frame), how streaming replies reach their view (``replies``), the first
frame itself (``first_paint``) and PySide6's check of each module imported after it (``feature_check``)."""
