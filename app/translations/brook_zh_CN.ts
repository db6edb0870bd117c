<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Appearance</name>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>&amp;Larger text</source>
        <translation>放大文字(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Smaller text</source>
        <translation>缩小文字(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Normal text size</source>
        <translation>默认文字大小(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <source>Text size %1 %</source>
        <translation>文字大小 %1%</translation>
    </message>
</context>
<context>
    <name>AttachmentsBar</name>
    <message>
        <source>Attach text files (code, markdown, logs, CSV)…</source>
        <extracomment>Count tokens right away only below this many characters (the count runs on the loop thread).</extracomment>
        <translation>附加文本文件（代码、Markdown、日志、CSV）…</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>附加文件</translation>
    </message>
    <message>
        <source>Attach text files</source>
        <translation>附加文本文件</translation>
    </message>
    <message>
        <source>Cannot attach %1: %2</source>
        <translation>无法附加 %1：%2</translation>
    </message>
    <message>
        <source>Remove this attachment</source>
        <translation>移除此附件</translation>
    </message>
    <message>
        <source>characters</source>
        <translation>个字符</translation>
    </message>
    <message>
        <source>Attachment %1, press to remove</source>
        <translation>附件 %1，按下以移除</translation>
    </message>
    <message>
        <source>pasted text</source>
        <translation>粘贴的文本</translation>
    </message>
</context>
<context>
    <name>ChatCommands</name>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>There is no saved chat to export yet.</source>
        <translation>还没有可导出的已保存对话。</translation>
    </message>
    <message>
        <source>Export to folder</source>
        <translation>导出到文件夹</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Import chats</source>
        <translation>导入对话</translation>
    </message>
    <message>
        <source>Brook chat export (*.json)</source>
        <translation>Brook 对话导出文件 (*.json)</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message numerus="yes">
        <source>Imported %n chat(s)</source>
        <translation>
            <numerusform>已导入 %n 个对话</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n already in the history skipped</source>
        <translation>
            <numerusform>跳过 %n 个已在历史中的对话</numerusform>
        </translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
</context>
<context>
    <name>ChatInput</name>
    <message>
        <source>Ask anything…  (Enter to send, Shift+Enter for a new line, Esc to stop)</source>
        <extracomment>Seconds without a key, click or focus change after which the caret stops blinking (and stays shown): GTK&apos;s ``gtk-cursor-blink-timeout`` (10 s). A blinking caret wakes the window twice a second; an idle window sleeps.</extracomment>
        <translation>随便问点什么…（Enter 发送，Shift+Enter 换行，Esc 停止）</translation>
    </message>
</context>
<context>
    <name>ChatSettingsDialog</name>
    <message>
        <source>Chat settings: %1</source>
        <translation>对话设置：%1</translation>
    </message>
    <message>
        <source>Instructions the model gets before this chat (optional)</source>
        <translation>模型在本对话开始前收到的指示（可选）</translation>
    </message>
    <message>
        <source>System prompt of this chat</source>
        <translation>本对话的系统提示词</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>These settings belong to this chat only. Defaults for new chats are in Settings.</source>
        <translation>这些设置只属于本对话。新对话的默认值在“设置”中。</translation>
    </message>
</context>
<context>
    <name>ChatSidebar</name>
    <message numerus="yes">
        <source>%n chat(s)</source>
        <translation>
            <numerusform>%n 个对话</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleted the folder “%1”; its %n chat(s) are kept</source>
        <translation>
            <numerusform>已删除文件夹“%1”；其中的 %n 个对话已保留</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Previous message</source>
        <extracomment>Pixels kept between a message scrolled to and the edge of the view.</extracomment>
        <translation>上一条消息</translation>
    </message>
    <message>
        <source>Next message</source>
        <translation>下一条消息</translation>
    </message>
    <message>
        <source>Reply</source>
        <translation>回复</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>你的消息</translation>
    </message>
    <message>
        <source>%1, message %2 of %3</source>
        <translation>%1，第 %2 条消息，共 %3 条</translation>
    </message>
</context>
<context>
    <name>ConnectionDialog</name>
    <message>
        <source>Connect to a server</source>
        <translation>连接到服务器</translation>
    </message>
    <message>
        <source>New connection</source>
        <translation>新建连接</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>已保存</translation>
    </message>
    <message>
        <source>e.g. GPU box</source>
        <translation>例如 GPU 主机</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>The API root of an OpenAI-compatible server: llama-server, vLLM, Ollama (http://127.0.0.1:11434/v1), LM Studio, or another Brook.</source>
        <translation>OpenAI 兼容服务器的 API 根地址：llama-server、vLLM、Ollama (http://127.0.0.1:11434/v1)、LM Studio 或另一个 Brook。</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Leave empty to use the first model the server lists.</source>
        <translation>留空则使用服务器列出的第一个模型。</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Replies the server generates at once: 1 for llama.cpp-style servers (one slot), more for vLLM. Others wait in line.</source>
        <translation>服务器同时生成的回复数：llama.cpp 类服务器为 1（一个槽位），vLLM 可以更多。其余的排队等待。</translation>
    </message>
    <message>
        <source>Concurrent replies</source>
        <translation>并发回复数</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Asking {0} for its models…</source>
        <translation>正在向 {0} 查询模型…</translation>
    </message>
    <message>
        <source>Connected: the server offers {0}.</source>
        <translation>已连接：服务器提供 {0}。</translation>
    </message>
</context>
<context>
    <name>ContextMeter</name>
    <message>
        <source>context %1 / %2</source>
        <translation>上下文 %1 / %2</translation>
    </message>
    <message>
        <source>Tokens this chat sends to the model (with what you are typing) out of its context window of %1 tokens; %2 more are kept free for the reply.</source>
        <translation>本对话（含正在输入的内容）发送给模型的 token 数，上下文窗口共 %1 个 token；另留 %2 个给回复。</translation>
    </message>
    <message>
        <source>context %1 tokens</source>
        <translation>上下文 %1 个 token</translation>
    </message>
    <message>
        <source>Tokens this chat sends to the model (with what you are typing). The server does not say how large its context window is.</source>
        <translation>本对话（连同你正在输入的内容）发送给模型的 token 数。服务器没有告知其上下文窗口的大小。</translation>
    </message>
    <message>
        <source>≈ An estimate from the text&apos;s length: this server cannot count tokens.</source>
        <translation>≈ 按文本长度估算：此服务器无法统计 token。</translation>
    </message>
    <message>
        <source>≈ Counted with the server&apos;s tokenizer; the few tokens its chat template adds are estimated.</source>
        <translation>≈ 由服务器的分词器统计；聊天模板额外添加的少量 token 为估算值。</translation>
    </message>
    <message numerus="yes">
        <source>%n old message(s) left out</source>
        <translation>
            <numerusform>%n 条旧消息未发送</numerusform>
        </translation>
    </message>
    <message>
        <source>The oldest messages no longer fit and are not sent. Start a new chat, or raise the context window in Settings.</source>
        <translation>最早的消息已放不下，不会发送。请开始新对话，或在设置中增大上下文窗口。</translation>
    </message>
    <message>
        <source>almost full</source>
        <translation>快满了</translation>
    </message>
</context>
<context>
    <name>DownloadRow</name>
    <message>
        <source>Download progress</source>
        <translation>下载进度</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Load this model now</source>
        <translation>立即加载此模型</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>%1/s</source>
        <translation>%1/秒</translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation>剩余 %1</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
</context>
<context>
    <name>EditMessageDialog</name>
    <message>
        <source>Edit and resend</source>
        <translation>编辑并重新发送</translation>
    </message>
    <message>
        <source>What followed this message is replaced by the new reply.</source>
        <translation>这条消息之后的内容将被新的回复取代。</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Resend</source>
        <translation>重新发送</translation>
    </message>
</context>
<context>
    <name>Figures</name>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个 token</translation>
    </message>
    <message>
        <source>prefill</source>
        <translation>预填充</translation>
    </message>
    <message>
        <source>first paint</source>
        <translation>首次绘制</translation>
    </message>
    <message>
        <source>waited for the model</source>
        <translation>等待模型</translation>
    </message>
    <message>
        <source>queue high-water mark</source>
        <translation>队列最高水位</translation>
    </message>
    <message>
        <source>backpressure waits &gt; 100 ms</source>
        <translation>背压等待（超过 100 ms）</translation>
    </message>
    <message>
        <source>backpressure wait total</source>
        <translation>背压等待合计</translation>
    </message>
    <message>
        <source>render ticks</source>
        <translation>渲染帧数</translation>
    </message>
    <message>
        <source>longest tick</source>
        <translation>最长一帧</translation>
    </message>
    <message>
        <source>total</source>
        <translation>总计</translation>
    </message>
    <message>
        <source>chunks</source>
        <translation>个块</translation>
    </message>
</context>
<context>
    <name>HelpDialogs</name>
    <message>
        <source>Send the message</source>
        <extracomment>(keys, what they do): listed in the shortcuts dialog; the window defines the same keys.</extracomment>
        <translation>发送消息</translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation>在消息中换行</translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation>停止回复</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation>搜索所有对话</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation>重新生成上一条回复</translation>
    </message>
    <message>
        <source>Copy the last reply</source>
        <translation>复制上一条回复</translation>
    </message>
    <message>
        <source>Open a model file</source>
        <translation>打开模型文件</translation>
    </message>
    <message>
        <source>Model library</source>
        <translation>模型库</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Focus the message box</source>
        <translation>聚焦到输入框</translation>
    </message>
    <message>
        <source>Previous / next message (Ctrl+L goes back to typing)</source>
        <translation>上一条 / 下一条消息（Ctrl+L 回到输入框）</translation>
    </message>
    <message>
        <source>Larger / smaller text</source>
        <translation>放大 / 缩小文字</translation>
    </message>
    <message>
        <source>Reset the text size</source>
        <translation>恢复默认文字大小</translation>
    </message>
    <message>
        <source>Download models from the Hugging Face Hub</source>
        <translation>从 Hugging Face Hub 下载模型</translation>
    </message>
    <message>
        <source>Export this chat</source>
        <translation>导出此对话</translation>
    </message>
    <message>
        <source>This chat&apos;s settings (system prompt, preset)</source>
        <translation>此对话的设置（系统提示词、预设）</translation>
    </message>
    <message>
        <source>Stream inspector</source>
        <translation>流检查器</translation>
    </message>
    <message>
        <source>Show or hide the chat list</source>
        <translation>显示或隐藏对话列表</translation>
    </message>
    <message>
        <source>Rename the chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Pin or unpin the chat (the one selected in the chat list)</source>
        <translation>置顶或取消置顶对话（对话列表中选中的那个）</translation>
    </message>
    <message>
        <source>Delete the selected chat (in the chat list)</source>
        <translation>删除选中的对话（在对话列表中）</translation>
    </message>
    <message>
        <source>Undo deleting a chat</source>
        <translation>撤销删除对话</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>This list</source>
        <translation>本列表</translation>
    </message>
    <message>
        <source>A desktop chat app for local language models. The words appear as fast as the model makes them, and Stop stops.</source>
        <translation>一个本地大语言模型的桌面聊天应用。模型生成多快，文字就显示多快；按下停止就立即停止。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Chats and models folder</source>
        <translation>对话与模型文件夹</translation>
    </message>
    <message>
        <source>About Brook</source>
        <translation>关于 Brook</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
</context>
<context>
    <name>Inspector</name>
    <message>
        <source>prefill</source>
        <extracomment>How often the inspector re-reads a live reply (ms). How often the summary figures are recomputed while live (s; percentiles over every chunk).</extracomment>
        <translation>预填充</translation>
    </message>
    <message>
        <source>first paint</source>
        <translation>首次绘制</translation>
    </message>
    <message>
        <source>decode</source>
        <translation>解码</translation>
    </message>
    <message>
        <source>tokens / chunks</source>
        <translation>token / 块</translation>
    </message>
    <message>
        <source>gap p50 / p95</source>
        <translation>间隔 p50 / p95</translation>
    </message>
    <message>
        <source>gap max</source>
        <translation>最大间隔</translation>
    </message>
    <message>
        <source>produced→painted p95</source>
        <translation>生成→绘制 p95</translation>
    </message>
    <message>
        <source>queue high-water</source>
        <translation>队列最高水位</translation>
    </message>
    <message>
        <source>backpressure waits</source>
        <translation>背压等待</translation>
    </message>
    <message>
        <source>render ticks</source>
        <translation>渲染帧数</translation>
    </message>
    <message>
        <source>longest tick</source>
        <translation>最长一帧</translation>
    </message>
    <message>
        <source>chunks / tick</source>
        <translation>每帧块数</translation>
    </message>
    <message>
        <source>stop latency</source>
        <translation>停止延迟</translation>
    </message>
    <message>
        <source>loop stalls</source>
        <translation>事件循环卡顿</translation>
    </message>
    <message>
        <source>No reply selected</source>
        <translation>未选择回复</translation>
    </message>
    <message>
        <source>Hover over the plot to see a chunk</source>
        <translation>将鼠标悬停在图上查看某个块</translation>
    </message>
    <message>
        <source>Copy as JSON</source>
        <translation>复制为 JSON</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>全部显示</translation>
    </message>
    <message>
        <source>Show the whole reply and follow it (after zooming or panning)</source>
        <translation>显示整条回复并跟随它（在缩放或平移之后）</translation>
    </message>
    <message>
        <source>Reply %1</source>
        <translation>回复 %1</translation>
    </message>
    <message>
        <source>Stream timeline</source>
        <translation>流式时间线</translation>
    </message>
    <message>
        <source>queue depth %1</source>
        <translation>队列深度 %1</translation>
    </message>
    <message>
        <source>waited %1 ms on a full queue</source>
        <translation>因队列已满等待了 %1 ms</translation>
    </message>
    <message>
        <source>chunk %1: %2</source>
        <translation>第 %1 块：%2</translation>
    </message>
    <message>
        <source>Save the stream timeline</source>
        <translation>保存流式时间线</translation>
    </message>
    <message>
        <source>Could not save to %1: %2</source>
        <translation>无法保存到 %1：%2</translation>
    </message>
    <message>
        <source>Stream inspector</source>
        <translation>流式检查器</translation>
    </message>
    <message>
        <source>Stream &amp;inspector</source>
        <translation>流检查器(&amp;I)</translation>
    </message>
    <message>
        <source>Where each chunk of a reply waited: timeline, queue, ticks, stalls (Ctrl+Shift+I)</source>
        <translation>回复的每个数据块在哪里等待：时间线、队列、渲染周期、卡顿 (Ctrl+Shift+I)</translation>
    </message>
    <message>
        <source>produced</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>enqueued</source>
        <translation>入队</translation>
    </message>
    <message>
        <source>dequeued</source>
        <translation>出队</translation>
    </message>
    <message>
        <source>painted</source>
        <translation>绘制</translation>
    </message>
    <message>
        <source>chunk</source>
        <translation>块</translation>
    </message>
    <message>
        <source>queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <source>tick ms</source>
        <translation>帧 ms</translation>
    </message>
    <message>
        <source>backpressure wait</source>
        <translation>背压等待</translation>
    </message>
</context>
<context>
    <name>LoadProgressDialog</name>
    <message>
        <source>Loading the model</source>
        <extracomment>A load shorter than this (ms) shows no window.</extracomment>
        <translation>正在加载模型</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Stop loading; the model in use before stays in use</source>
        <translation>停止加载；继续使用之前的模型</translation>
    </message>
    <message>
        <source>Cancel loading the model</source>
        <translation>取消加载模型</translation>
    </message>
    <message>
        <source>Load progress</source>
        <translation>加载进度</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>%1 s so far</source>
        <translation>已用 %1 秒</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>+  New chat</source>
        <extracomment>Item data role of a chat row that holds True while the chat has a reply generating. Item data role holding a row&apos;s ``RowKind``. Item data role of a folder row holding the folder&apos;s id (a chat row holds its chat&apos;s id in ``UserRole``). The key that pins or unpins a chat. Qt&apos;s lookup (lupdate reads its literal calls; the sidebar&apos;s texts are in the window&apos;s &quot;MainWindow&quot; context)</extracomment>
        <translation>+  新建对话</translation>
    </message>
    <message>
        <source>New chat (Ctrl+N)</source>
        <translation>新建对话 (Ctrl+N)</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>对话列表</translation>
    </message>
    <message>
        <source>&amp;Pin chat</source>
        <translation>置顶对话(&amp;P)</translation>
    </message>
    <message>
        <source>New &amp;folder…</source>
        <translation>新建文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>已置顶</translation>
    </message>
    <message>
        <source>Pinned chats (Ctrl+Shift+P pins or unpins a chat)</source>
        <translation>置顶的对话（Ctrl+Shift+P 置顶或取消置顶）</translation>
    </message>
    <message>
        <source>New folder</source>
        <translation>新建文件夹</translation>
    </message>
    <message>
        <source>Folder name</source>
        <translation>文件夹名称</translation>
    </message>
    <message>
        <source>Rename folder</source>
        <translation>重命名文件夹</translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>(save the chat first)</source>
        <translation>（请先保存对话）</translation>
    </message>
    <message>
        <source>New folder…</source>
        <translation>新建文件夹…</translation>
    </message>
    <message>
        <source>Remove from folder</source>
        <translation>移出文件夹</translation>
    </message>
    <message>
        <source>Unpin chat</source>
        <translation>取消置顶</translation>
    </message>
    <message>
        <source>Pin chat</source>
        <translation>置顶对话</translation>
    </message>
    <message>
        <source>Move to folder</source>
        <translation>移到文件夹</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Rename folder…</source>
        <translation>重命名文件夹…</translation>
    </message>
    <message>
        <source>Delete folder (keeps its chats)</source>
        <translation>删除文件夹（保留其中的对话）</translation>
    </message>
    <message>
        <source>Un&amp;pin chat</source>
        <translation>取消置顶(&amp;P)</translation>
    </message>
    <message>
        <source>A folder needs a name.</source>
        <translation>文件夹需要一个名称。</translation>
    </message>
    <message>
        <source>A folder name can have at most %1 characters.</source>
        <translation>文件夹名称最多 %1 个字符。</translation>
    </message>
    <message>
        <source>A folder called “%1” already exists.</source>
        <translation>已有名为“%1”的文件夹。</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Message to send</source>
        <translation>要发送的消息</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>&amp;Open model (GGUF)…</source>
        <translation>打开模型 (GGUF)(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Export this chat…</source>
        <translation>导出此对话(&amp;E)…</translation>
    </message>
    <message>
        <source>Export &amp;all chats…</source>
        <translation>导出全部对话(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Import chats (JSON)…</source>
        <translation>导入对话 (JSON)(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Regenerate last reply</source>
        <translation>重新生成上一条回复(&amp;R)</translation>
    </message>
    <message>
        <source>Focus input</source>
        <translation>聚焦输入框</translation>
    </message>
    <message>
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <source>&amp;Undo delete chat</source>
        <extracomment>How long Undo stays offered after a chat was deleted (ms).</extracomment>
        <translation>撤销删除对话(&amp;U)</translation>
    </message>
    <message>
        <source>Show &amp;sidebar</source>
        <translation>显示侧边栏(&amp;S)</translation>
    </message>
    <message>
        <source>Deleted “%1” — Undo with Ctrl+Shift+Z</source>
        <translation>已删除“%1”——按 Ctrl+Shift+Z 撤销</translation>
    </message>
    <message>
        <source>Restored “%1”</source>
        <translation>已恢复“%1”</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <extracomment>Each menu&apos;s title (the source text; shown translated, context &quot;MainWindow&quot;).</extracomment>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Server</source>
        <translation>服务器(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>waiting for the model…</source>
        <translation>正在等待模型…</translation>
    </message>
    <message>
        <source>reading the prompt…</source>
        <translation>正在读取提示…</translation>
    </message>
    <message>
        <source>generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>&amp;Search all chats</source>
        <translation>搜索所有对话(&amp;S)</translation>
    </message>
    <message>
        <source>Chat &amp;settings (system prompt, preset)…</source>
        <translation>对话设置（系统提示词、预设）(&amp;S)…</translation>
    </message>
    <message>
        <source>Re&amp;name chat…</source>
        <translation>重命名对话(&amp;N)…</translation>
    </message>
    <message>
        <source>&amp;Duplicate chat</source>
        <translation>复制对话(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Move to folder</source>
        <translation>移到文件夹(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>&amp;About Brook</source>
        <translation>关于 Brook(&amp;A)</translation>
    </message>
    <message>
        <source>Open a GGUF model</source>
        <translation>打开 GGUF 模型</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>loading model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>model failed to load</source>
        <translation>模型加载失败</translation>
    </message>
    <message>
        <source>model load cancelled</source>
        <translation>已取消加载模型</translation>
    </message>
    <message>
        <source>model unloaded to free memory (loads again with your next message)</source>
        <translation>模型已卸载以释放内存（发送下一条消息时重新加载）</translation>
    </message>
    <message>
        <source>Stop generating (Esc)</source>
        <translation>停止生成 (Esc)</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>发送 (Enter)</translation>
    </message>
</context>
<context>
    <name>MarkdownView</name>
    <message>
        <source>Copy</source>
        <extracomment>Languages with a translation besides English (the source language).</extracomment>
        <translation>复制</translation>
    </message>
    <message>
        <source>Open this link?</source>
        <extracomment>Proportional font families, with CJK fallbacks (Qt uses the first installed family that has a glyph). Qt lays a run of text with no break opportunity out in time that grows much faster than its length (a word of 100,000 characters took 0.4 s, 200,000 3.3 s; with a zero-width space every 200 characters 76 and 129 ms). The view gives such runs (outside tags) a break opportunity every ``RUN_BREAK_CHARS`` characters; the renderer&apos;s HTML, the message&apos;s text and copied selections keep none. Milliseconds between looks at the lexer pool while code colours are pending (after the stream ended).</extracomment>
        <translation>打开此链接？</translation>
    </message>
    <message>
        <source>The link says %1 but opens %2.

Open %2?</source>
        <translation>链接显示为 %1，但实际打开 %2。

要打开 %2 吗？</translation>
    </message>
</context>
<context>
    <name>MessageMenu</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Select All</source>
        <translation>全选</translation>
    </message>
    <message>
        <source>Copy (markdown)</source>
        <translation>复制（Markdown）</translation>
    </message>
    <message>
        <source>Edit and resend…</source>
        <translation>编辑并重新发送…</translation>
    </message>
    <message>
        <source>Regenerate (keeps this version)</source>
        <translation>重新生成（保留此版本）</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Versions</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Branch from here (new chat)</source>
        <translation>从这里分支（新对话）</translation>
    </message>
    <message>
        <source>Inspect the stream (timings)</source>
        <translation>查看流式过程（时间）</translation>
    </message>
    <message>
        <source>Delete message</source>
        <translation>删除消息</translation>
    </message>
</context>
<context>
    <name>MessageStatus</name>
    <message>
        <source>waiting for the model…</source>
        <extracomment>The links of a reply&apos;s ‹ k/n › version switcher.</extracomment>
        <translation>正在等待模型…</translation>
    </message>
    <message>
        <source>reading the prompt…</source>
        <translation>正在读取提示…</translation>
    </message>
    <message>
        <source>generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>timed out</source>
        <translation>已超时</translation>
    </message>
    <message>
        <source>error</source>
        <translation>出错</translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <source>Reply</source>
        <extracomment>‹ or › of a reply&apos;s version switcher was clicked: the version index (0-based) to show</extracomment>
        <translation>回复</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>你的消息</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个 token</translation>
    </message>
    <message>
        <source>%1 characters</source>
        <translation>%1 个字符</translation>
    </message>
    <message>
        <source>cut at the token limit</source>
        <translation>已达 token 上限而截断</translation>
    </message>
    <message>
        <source>cut: the context window is full</source>
        <translation>截断：上下文窗口已满</translation>
    </message>
    <message>
        <source>Click ‹ or › to see the other versions of this reply</source>
        <translation>点击 ‹ 或 › 查看此回复的其他版本</translation>
    </message>
    <message>
        <source>version %1 of %2</source>
        <translation>第 %1 个版本，共 %2 个</translation>
    </message>
    <message>
        <source>Resend</source>
        <translation>重新发送</translation>
    </message>
    <message>
        <source>waited %1 s for the model</source>
        <translation>等待模型 %1 秒</translation>
    </message>
</context>
<context>
    <name>ModelHubDialog</name>
    <message>
        <source>fits</source>
        <extracomment>How the fit verdicts read (translated in the ``ModelHubDialog`` context).</extracomment>
        <translation>可以运行</translation>
    </message>
    <message>
        <source>tight: close other programs</source>
        <translation>偏紧：请关闭其他程序</translation>
    </message>
    <message>
        <source>too large</source>
        <translation>太大</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>downloading</source>
        <translation>下载中</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>checking SHA-256</source>
        <translation>正在校验 SHA-256</translation>
    </message>
    <message>
        <source>done, SHA-256 verified</source>
        <translation>完成，SHA-256 已校验</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Quantization</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Memory needed</source>
        <translation>所需内存</translation>
    </message>
    <message>
        <source>This machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Download models</source>
        <translation>下载模型</translation>
    </message>
    <message>
        <source>Search the Hugging Face Hub for GGUF models, e.g. qwen2.5 instruct</source>
        <translation>在 Hugging Face Hub 上搜索 GGUF 模型，例如 qwen2.5 instruct</translation>
    </message>
    <message>
        <source>Search models</source>
        <translation>搜索模型</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Models found</source>
        <translation>找到的模型</translation>
    </message>
    <message>
        <source>Choose a model on the left to see its files.</source>
        <translation>在左侧选择一个模型以查看其文件。</translation>
    </message>
    <message>
        <source>Files of the model</source>
        <translation>模型的文件</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Downloads (into %1)</source>
        <translation>下载（保存到 %1）</translation>
    </message>
    <message>
        <source>Hub token for gated or private models (optional)</source>
        <translation>受限或私有模型的 Hub 令牌（可选）</translation>
    </message>
    <message>
        <source>Hub token</source>
        <translation>Hub 令牌</translation>
    </message>
    <message>
        <source>Save token</source>
        <translation>保存令牌</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <source>Reading the files of %1…</source>
        <translation>正在读取 %1 的文件…</translation>
    </message>
    <message>
        <source>gated: needs a token</source>
        <translation>受限：需要令牌</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found</source>
        <translation>
            <numerusform>找到 %n 个模型</numerusform>
        </translation>
    </message>
    <message>
        <source>No GGUF models found for this search.</source>
        <translation>没有找到符合此搜索的 GGUF 模型。</translation>
    </message>
    <message>
        <source>too large for %1 of %2</source>
        <translation>超过本机 %1 的 %2</translation>
    </message>
    <message>
        <source>SHA-256 %1</source>
        <translation>SHA-256 %1</translation>
    </message>
    <message numerus="yes">
        <source>%n GGUF file(s); memory for a %1-token context, against this machine&apos;s %2</source>
        <translation>
            <numerusform>%n 个 GGUF 文件；按 %1 个 token 的上下文估算内存，对比本机 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>This repo has no GGUF files.</source>
        <translation>此仓库没有 GGUF 文件。</translation>
    </message>
</context>
<context>
    <name>ModelLibraryDialog</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Quantization</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Model library</source>
        <translation>模型库</translation>
    </message>
    <message>
        <source>Change folder…</source>
        <translation>更改文件夹…</translation>
    </message>
    <message>
        <source>Show in file manager</source>
        <translation>在文件管理器中显示</translation>
    </message>
    <message>
        <source>Rescan</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <source>Folder: %1</source>
        <translation>文件夹：%1</translation>
    </message>
    <message>
        <source>Reading model headers…</source>
        <translation>正在读取模型文件头…</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>有</translation>
    </message>
    <message>
        <source>no</source>
        <translation>无</translation>
    </message>
    <message>
        <source>broken: %1</source>
        <translation>已损坏：%1</translation>
    </message>
    <message>
        <source>loaded</source>
        <translation>已加载</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>可用</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s)</source>
        <translation>
            <numerusform>%n 个模型</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n broken</source>
        <translation>
            <numerusform>%n 个已损坏</numerusform>
        </translation>
    </message>
    <message>
        <source>No GGUF files here yet. Put .gguf models in this folder, then Rescan.</source>
        <translation>这里还没有 GGUF 文件。把 .gguf 模型放进这个文件夹，然后点“重新扫描”。</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>模型文件夹</translation>
    </message>
</context>
<context>
    <name>ModelSettingsDialog</name>
    <message>
        <source>Settings of %1</source>
        <translation>%1 的设置</translation>
    </message>
    <message>
        <source>These apply to this model file only. A chat&apos;s own settings still win.</source>
        <translation>这些设置只用于这个模型文件。对话自己的设置仍然优先。</translation>
    </message>
    <message>
        <source>Loading</source>
        <translation>加载</translation>
    </message>
    <message>
        <source>the app&apos;s (%1)</source>
        <translation>应用的设置（%1）</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个 token</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>Layers offloaded to the GPU (-1: as many as fit); only with a GPU build of llama.cpp</source>
        <translation>卸载到 GPU 的层数（-1：能放下多少就放多少）；仅适用于支持 GPU 的 llama.cpp</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source>Sampling defaults</source>
        <translation>默认采样参数</translation>
    </message>
    <message>
        <source>This model has its own sampling defaults</source>
        <translation>此模型使用自己的默认采样参数</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>聊天模板</translation>
    </message>
    <message>
        <source>Empty: the model file&apos;s own template (tokenizer.chat_template)</source>
        <translation>留空：使用模型文件自带的模板（tokenizer.chat_template）</translation>
    </message>
    <message>
        <source>Chat template override</source>
        <translation>聊天模板覆盖</translation>
    </message>
    <message>
        <source>Override (Jinja)</source>
        <translation>覆盖（Jinja）</translation>
    </message>
    <message>
        <source>Start from the file&apos;s template</source>
        <translation>从文件自带的模板开始</translation>
    </message>
    <message>
        <source>Use ChatML</source>
        <translation>使用 ChatML</translation>
    </message>
    <message>
        <source>The most common chat format (&lt;|im_start|&gt;role … &lt;|im_end|&gt;)</source>
        <translation>最常见的聊天格式（&lt;|im_start|&gt;角色 … &lt;|im_end|&gt;）</translation>
    </message>
    <message>
        <source>Prompt for a sample chat</source>
        <translation>示例对话的提示词</translation>
    </message>
    <message>
        <source>Prompt preview</source>
        <translation>提示词预览</translation>
    </message>
    <message>
        <source>This model file has no chat template: Brook uses ChatML. Write an override if the model expects another format.</source>
        <translation>此模型文件没有聊天模板：Brook 使用 ChatML。如果模型需要其他格式，请写一个覆盖模板。</translation>
    </message>
    <message>
        <source>The override</source>
        <translation>覆盖模板</translation>
    </message>
    <message>
        <source>The model file&apos;s template</source>
        <translation>模型文件自带的模板</translation>
    </message>
    <message>
        <source>Write an override above, or press Use ChatML.</source>
        <translation>请在上方写一个覆盖模板，或点击“使用 ChatML”。</translation>
    </message>
</context>
<context>
    <name>ModelsMenu</name>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Model &amp;library…</source>
        <translation>模型库(&amp;L)…</translation>
    </message>
    <message>
        <source>&amp;Download models (Hugging Face Hub)…</source>
        <translation>下载模型（Hugging Face Hub）(&amp;D)…</translation>
    </message>
    <message>
        <source>Settings of &amp;this model…</source>
        <translation>此模型的设置(&amp;T)…</translation>
    </message>
    <message>
        <source>Recent models</source>
        <translation>最近使用的模型</translation>
    </message>
    <message>
        <source>Use the &amp;bundled model</source>
        <translation>使用内置模型(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Unload the model (free its memory)</source>
        <translation>卸载模型（释放内存）(&amp;U)</translation>
    </message>
    <message>
        <source>Settings of this model</source>
        <translation>此模型的设置</translation>
    </message>
    <message>
        <source>The model in use is not a model file on this computer.</source>
        <translation>当前使用的模型不是本机上的模型文件。</translation>
    </message>
    <message>
        <source>Bundled model</source>
        <translation>内置模型</translation>
    </message>
    <message>
        <source>(none yet)</source>
        <translation>（暂无）</translation>
    </message>
</context>
<context>
    <name>Notes</name>
    <message>
        <source>The oldest message was left out of this reply&apos;s prompt: the chat no longer fits the model&apos;s context window. Start a new chat, or paste the part that matters again.</source>
        <extracomment>The link target the window puts in an unanswered reply&apos;s note (&quot;Resend&quot;). The notes&apos; texts, in English; the window shows them in its language (``app.ui.look.retranslate.core_text`` matches a note against these templates, ``%1`` a number).</extracomment>
        <translation>最早的一条消息没有放进这条回复的提示词：对话已超出模型的上下文窗口。请开始新对话，或把重要的部分重新粘贴一次。</translation>
    </message>
    <message>
        <source>The %1 oldest messages were left out of this reply&apos;s prompt: the chat no longer fits the model&apos;s context window. Start a new chat, or paste the part that matters again.</source>
        <translation>最早的 %1 条消息没有放进这条回复的提示词：对话已超出模型的上下文窗口。请开始新对话，或把重要的部分重新粘贴一次。</translation>
    </message>
    <message>
        <source>Stopped before any reply. This question is left out of the chat from now on; Resend asks it again.</source>
        <translation>在回复之前就已停止。此后这个问题不再计入对话；点“重新发送”可再问一次。</translation>
    </message>
    <message>
        <source>The model ended its reply without any text. This question is left out of the chat from now on; Resend asks it again.</source>
        <translation>模型结束了回复，但没有输出任何文字。此后这个问题不再计入对话；点“重新发送”可再问一次。</translation>
    </message>
    <message>
        <source>No reply. This question is left out of the chat from now on; Resend asks it again.</source>
        <translation>没有回复。此后这个问题不再计入对话；点“重新发送”可再问一次。</translation>
    </message>
    <message>
        <source>Loading %1 was cancelled.</source>
        <extracomment>Said in the chat when a model load is cancelled (``app.core.errors.LoadCancelled``).</extracomment>
        <translation>已取消加载 %1。</translation>
    </message>
    <message>
        <source>Loading the model was cancelled.</source>
        <translation>已取消加载模型。</translation>
    </message>
    <message>
        <source>Kept %1: loading %2 was cancelled.</source>
        <extracomment>Notices after a model switch that did not happen (English; the window translates them: ``Notes`` context).</extracomment>
        <translation>继续使用 %1：已取消加载 %2。</translation>
    </message>
    <message>
        <source>Kept %1: the other model could not be loaded (%2).</source>
        <translation>继续使用 %1：另一个模型无法加载（%2）。</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>Focused and repeatable: facts, code, summaries, extraction.</source>
        <translation>专注、可复现：事实、代码、摘要、信息提取。</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s defaults with temperature 0.7: everyday chat.</source>
        <translation>llama.cpp 默认值，温度 0.7：日常聊天。</translation>
    </message>
    <message>
        <source>Varied and surprising: stories, brainstorming, names.</source>
        <translation>多样、出人意料：故事、头脑风暴、起名。</translation>
    </message>
    <message>
        <source>Precise</source>
        <extracomment>The names, for translation (the UI shows ``translate(&quot;Presets&quot;, name)``).</extracomment>
        <translation>精确</translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation>均衡</translation>
    </message>
    <message>
        <source>Creative</source>
        <translation>创意</translation>
    </message>
</context>
<context>
    <name>Provenance</name>
    <message>
        <source>model</source>
        <extracomment>Bytes read per step while hashing (1 MiB). What a reply&apos;s provenance keeps of ``engine.runtime()`` (``app.engine.llama.LlamaEngine.runtime``). Sampling parameters shown by ``describe``, in this order. ``describe``&apos;s labels (the UI translates them in the &quot;Provenance&quot; context).</extracomment>
        <translation>模型</translation>
    </message>
    <message>
        <source>model file</source>
        <translation>模型文件</translation>
    </message>
    <message>
        <source>size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>SHA-256</source>
        <translation>SHA-256</translation>
    </message>
    <message>
        <source>chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>top p</source>
        <translation>top p</translation>
    </message>
    <message>
        <source>top k</source>
        <translation>top k</translation>
    </message>
    <message>
        <source>min p</source>
        <translation>min p</translation>
    </message>
    <message>
        <source>repeat penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>max tokens</source>
        <translation>最大 token 数</translation>
    </message>
    <message>
        <source>stop</source>
        <translation>停止词</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>TTFT</source>
        <translation>首 token 时间</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>token 数</translation>
    </message>
    <message>
        <source>stop reason</source>
        <translation>停止原因</translation>
    </message>
</context>
<context>
    <name>SamplingForm</name>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>e.g. ###, &lt;/answer&gt;   (comma-separated)</source>
        <translation>例如 ###, &lt;/answer&gt;（用逗号分隔）</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>重复惩罚</translation>
    </message>
    <message>
        <source>Max tokens per reply</source>
        <translation>每条回复最多 token 数</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Stop strings</source>
        <translation>停止词</translation>
    </message>
</context>
<context>
    <name>SearchPanel</name>
    <message>
        <source>Search all chats…</source>
        <extracomment>How long a search hit&apos;s message stays outlined after it was opened (ms). Typing pause before the query runs (ms).</extracomment>
        <translation>搜索所有对话…</translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation>搜索所有对话</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>搜索结果</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message numerus="yes">
        <source>%n chat title(s)</source>
        <translation>
            <numerusform>%n 个对话标题</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) found</source>
        <translation>
            <numerusform>找到 %n 条消息</numerusform>
        </translation>
    </message>
    <message>
        <source>Nothing found</source>
        <translation>没有找到</translation>
    </message>
    <message>
        <source>Search took %1 ms</source>
        <translation>搜索用时 %1 毫秒</translation>
    </message>
</context>
<context>
    <name>Sending</name>
    <message numerus="yes">
        <source>%n message(s) waiting: sent when the reply ends</source>
        <translation>
            <numerusform>%n 条消息等待中：回复结束后发送</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ServerMenu</name>
    <message>
        <source>Connect to a server…</source>
        <translation>连接到服务器…</translation>
    </message>
    <message>
        <source>Use the local model</source>
        <translation>使用本地模型</translation>
    </message>
    <message>
        <source>Serve this model to other apps ({0})</source>
        <translation>将此模型提供给其他应用 ({0})</translation>
    </message>
    <message>
        <source>An OpenAI-compatible API on this machine only (loopback); other apps and the window take turns with the model.</source>
        <translation>仅在本机（回环地址）提供 OpenAI 兼容 API；其他应用与本窗口轮流使用模型。</translation>
    </message>
    <message>
        <source>Serving {0} at {1}</source>
        <translation>正在 {1} 提供 {0}</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Brook settings</source>
        <translation>Brook 设置</translation>
    </message>
    <message>
        <source>New chats</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Sampling preset of new chats; choosing one fills in the fields below.</source>
        <translation>新对话的采样预设；选择后会填入下面的各项。</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Optional instructions for the model, used by new chats</source>
        <translation>给模型的可选指示，用于新对话</translation>
    </message>
    <message>
        <source>Default system prompt</source>
        <translation>默认系统提示词</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个 token</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Automatic on this machine: {0}.</source>
        <translation>这台机器上的自动值：{0}。</translation>
    </message>
    <message>
        <source>as many as fit</source>
        <translation>放得下的尽量多</translation>
    </message>
    <message>
        <source>This llama.cpp was built without a GPU backend: the model runs on the CPU.</source>
        <translation>此 llama.cpp 构建不含 GPU 后端：模型在 CPU 上运行。</translation>
    </message>
    <message>
        <source>default: the models folder in Brook&apos;s data folder</source>
        <translation>默认：Brook 数据文件夹中的 models 文件夹</translation>
    </message>
    <message>
        <source>The folder the model library lists (GGUF files, searched in sub-folders).</source>
        <translation>模型库列出的文件夹（GGUF 文件，包括子文件夹）。</translation>
    </message>
    <message>
        <source>Context window (next model load)</source>
        <translation>上下文窗口（下次加载模型时生效）</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU 层数</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>Unload the model after this long without a reply, to free its memory; the next message loads it again.</source>
        <translation>超过这段时间没有回复时卸载模型以释放内存；发送下一条消息时会重新加载。</translation>
    </message>
    <message>
        <source>Models folder</source>
        <translation>模型文件夹</translation>
    </message>
    <message>
        <source>Unload when idle</source>
        <translation>空闲时卸载模型</translation>
    </message>
    <message>
        <source>Time limits</source>
        <translation>时间限制</translation>
    </message>
    <message>
        <source>Give up when the model has not started answering after this long.</source>
        <translation>模型在这么长时间内没有开始回答就放弃。</translation>
    </message>
    <message>
        <source>Stop a reply that takes longer than this in all (its text is kept).</source>
        <translation>回复总用时超过此值时停止（已生成的文字保留）。</translation>
    </message>
    <message>
        <source>First-token timeout</source>
        <translation>首个 token 超时</translation>
    </message>
    <message>
        <source>Total timeout</source>
        <translation>总超时</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Event-loop watchdog threshold</source>
        <translation>事件循环看门狗阈值</translation>
    </message>
    <message>
        <source>When the window&apos;s event loop does not turn for longer than this (a stutter you would notice), Brook logs one warning with the stack of the code that held it up, and the stream inspector counts the stall. Default 100 ms; lower finds shorter stutters, 0 turns the watchdog off. Applies at once.</source>
        <translation>当窗口的事件循环停顿超过此时长（你能察觉到的卡顿）时，Brook 会记录一条警告，附上造成阻塞的代码调用栈，流式检查器也会计入这次卡顿。默认 100 ms；更低的值能发现更短的卡顿，0 表示关闭看门狗。立即生效。</translation>
    </message>
    <message>
        <source>Event-loop watchdog</source>
        <translation>事件循环看门狗</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>跟随系统语言</translation>
    </message>
    <message>
        <source>Language of Brook&apos;s windows (changes at once).</source>
        <translation>Brook 窗口的语言（立即生效）。</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source>≈ %1 for this context (KV cache) + %2 of weights</source>
        <translation>此上下文约需 %1（KV 缓存）+ %2 权重</translation>
    </message>
</context>
<context>
    <name>SettingsHelp</name>
    <message>
        <source>Randomness. 0 always picks the most likely token; 0.7 is usual for chat; above 1 gets wild.</source>
        <extracomment>One-line explanation of each sampling parameter (tooltips, docs). Sources: llama.cpp ``tools/main/README.md``.</extracomment>
        <translation>随机性。0 总是选最可能的 token；聊天通常用 0.7；大于 1 会很放飞。</translation>
    </message>
    <message>
        <source>Nucleus sampling: keep the most likely tokens whose probabilities add up to this (0.95 = 95 %).</source>
        <translation>核采样：只保留概率累计达到该值的最可能 token（0.95 = 95%）。</translation>
    </message>
    <message>
        <source>Keep only the K most likely tokens before sampling (0 = no limit).</source>
        <translation>采样前只保留最可能的 K 个 token（0 = 不限）。</translation>
    </message>
    <message>
        <source>Drop tokens less likely than this fraction of the most likely one (0.05 = 5 %).</source>
        <translation>丢弃概率低于最可能 token 该比例的 token（0.05 = 5%）。</translation>
    </message>
    <message>
        <source>Penalise tokens already used recently (1.0 = off; 1.1 is a gentle nudge against loops).</source>
        <translation>惩罚最近已出现的 token（1.0 = 关闭；1.1 可温和地避免重复）。</translation>
    </message>
    <message>
        <source>Longest reply, in tokens (about ¾ of a word each in English).</source>
        <translation>回复的最大长度，以 token 计（一个汉字约 1–2 个 token）。</translation>
    </message>
    <message>
        <source>Random seed. Set one to get the same reply again from the same prompt and settings.</source>
        <translation>随机种子。设定后，相同的提示和设置会得到相同的回复。</translation>
    </message>
    <message>
        <source>Texts that end the reply when the model writes them (not shown).</source>
        <translation>模型写出这些文本时结束回复（不显示）。</translation>
    </message>
    <message>
        <source>CPU threads for the model (automatic = the physical cores, minus one on a machine with up to 8, so the window keeps a core to show the reply).</source>
        <translation>模型使用的 CPU 线程数（自动 = 物理核心数；在不超过 8 个核心的机器上减一，让窗口留一个核心显示回复）。</translation>
    </message>
    <message>
        <source>Model layers run on the GPU (needs a GPU build of llama.cpp; -1 = as many as fit). 0 = CPU only.</source>
        <translation>在 GPU 上运行的模型层数（需要支持 GPU 的 llama.cpp；-1 = 显存放得下的尽量多）。0 = 仅用 CPU。</translation>
    </message>
    <message>
        <source>Context window in tokens: how much of the chat the model sees. More needs more memory.</source>
        <translation>上下文窗口（token）：模型能看到多少对话内容。越大占用内存越多。</translation>
    </message>
</context>
<context>
    <name>StatusBar</name>
    <message>
        <source>loading…</source>
        <extracomment>Live figures are refreshed at most this often while a reply streams (seconds).</extracomment>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>Time to first token of the last reply (prefill + first paint)</source>
        <translation>上一条回复的首 token 时间（预填充 + 首次绘制）</translation>
    </message>
    <message>
        <source>Decode speed of the last reply</source>
        <translation>上一条回复的解码速度</translation>
    </message>
    <message>
        <source>Chunks waiting between the model and the window (live), and the puts that waited &gt; 100 ms on a full queue (backpressure)</source>
        <translation>模型与窗口之间等待中的数据块（实时），以及因队列已满等待超过 100 毫秒的写入次数（背压）</translation>
    </message>
    <message>
        <source>on %1</source>
        <translation>运行于 %1</translation>
    </message>
    <message>
        <source>The device the model runs on: %1</source>
        <translation>模型运行的设备：%1</translation>
    </message>
    <message>
        <source>queue %1 (≤%2) · waits %3</source>
        <translation>队列 %1（≤%2）· 等待 %3 次</translation>
    </message>
    <message>
        <source>Last reply</source>
        <translation>上一条回复</translation>
    </message>
    <message>
        <source>queue ≤%1 · waits %2</source>
        <translation>队列 ≤%1 · 等待 %2 次</translation>
    </message>
</context>
<context>
    <name>StreamInspector</name>
    <message>
        <source>stored timeline</source>
        <translation>已保存的时间线</translation>
    </message>
    <message>
        <source>no timeline (none was stored with this reply)</source>
        <translation>没有时间线（这条回复未保存时间线）</translation>
    </message>
</context>
<context>
    <name>WelcomeView</name>
    <message>
        <source>Start a new chat</source>
        <translation>开始新对话</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Model: %1 · runs on this computer, nothing leaves it</source>
        <translation>模型：%1 · 在本机运行，数据不会离开这台电脑</translation>
    </message>
    <message>
        <source>Explain recursion to a 10-year-old, with an example.</source>
        <translation>用一个例子向 10 岁的孩子解释递归。</translation>
    </message>
    <message>
        <source>Write a Python function that checks whether a string is a palindrome.</source>
        <translation>写一个判断字符串是否为回文的 Python 函数。</translation>
    </message>
    <message>
        <source>Give me three ideas for a weekend trip, as a table.</source>
        <translation>给我三个周末出游的点子，用表格列出。</translation>
    </message>
    <message>
        <source>Example prompt: %1</source>
        <translation>示例提示：%1</translation>
    </message>
    <message>
        <source>Enter sends · Shift+Enter new line · Esc stops · Ctrl+F searches all chats · F1 lists every shortcut</source>
        <translation>Enter 发送 · Shift+Enter 换行 · Esc 停止 · Ctrl+F 搜索所有对话 · F1 查看全部快捷键</translation>
    </message>
</context>
</TS>
