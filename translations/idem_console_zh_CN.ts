<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>idem::Wording</name>
    <message>
        <source>every task</source>
        <translation>所有任务</translation>
    </message>
    <message>
        <source> or </source>
        <translation> 或 </translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>Role %1 does not hold the %2 right (role %3): the database refuses this to it. An administrator grants it with GRANT %3 TO %1.</source>
        <translation>角色 %1 没有 %2 权限（角色 %3）：数据库会拒绝它执行此操作。管理员可以用 GRANT %3 TO %1 授予。</translation>
    </message>
    <message>
        <source>Role %1 is not idem_operator: the database refuses this to it.</source>
        <translation>角色 %1 不是 idem_operator：数据库会拒绝它执行此操作。</translation>
    </message>
    <message>
        <source>status %1</source>
        <translation>状态为 %1</translation>
    </message>
    <message>
        <source>tenant %1</source>
        <translation>租户 %1</translation>
    </message>
    <message>
        <source>operation %1</source>
        <translation>操作 %1</translation>
    </message>
    <message>
        <source>key starting with %1</source>
        <translation>键以 %1 开头</translation>
    </message>
    <message>
        <source>attempts &gt;= %1</source>
        <translation>尝试次数 ≥ %1</translation>
    </message>
    <message>
        <source>lease expired</source>
        <translation>租约已过期</translation>
    </message>
    <message>
        <source>lease running</source>
        <translation>租约仍有效</translation>
    </message>
    <message>
        <source>outcome unknown</source>
        <translation>结果未知</translation>
    </message>
    <message>
        <source>error class %1</source>
        <translation>错误类别 %1</translation>
    </message>
    <message>
        <source>retries exhausted (not a permanent error)</source>
        <translation>重试已用尽（非永久性错误）</translation>
    </message>
    <message>
        <source>failed since %1</source>
        <translation>自 %1 起失败</translation>
    </message>
    <message>
        <source>unfinished for %1 min</source>
        <translation>未完成已超过 %1 分钟</translation>
    </message>
    <message>
        <source>with digest conflicts</source>
        <translation>有摘要冲突</translation>
    </message>
    <message>
        <source>updated within %1 min</source>
        <translation>最近 %1 分钟内更新</translation>
    </message>
    <message>
        <source>a conflict within %1 min</source>
        <translation>最近 %1 分钟内有冲突</translation>
    </message>
    <message>
        <source>a retry failed in the window</source>
        <translation>窗口内有重试失败</translation>
    </message>
    <message>
        <source>error message containing &quot;%1&quot; (any case)</source>
        <translation>错误信息包含“%1”（不区分大小写）</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <source>%1 d</source>
        <translation>%1 天</translation>
    </message>
</context>
<context>
    <name>idem::console::ActionDialog</name>
    <message>
        <source>Requeue</source>
        <translation>重新入队</translation>
    </message>
    <message>
        <source>Release lease</source>
        <translation>释放租约</translation>
    </message>
    <message>
        <source>Mark failed</source>
        <translation>标记为失败</translation>
    </message>
    <message>
        <source>becomes retryable_failed and due now, with %1 more attempt(s) than it has used (max_attempts = attempts + %1); an uncertain outcome stays flagged.</source>
        <translation>变为 retryable_failed 并立即到期，比已用次数多 %1 次尝试（max_attempts = attempts + %1）；结果不确定的标记保留。</translation>
    </message>
    <message>
        <source>keeps status processing with its lease expired now; the owner token is revoked, so the old executor can no longer commit, and the next claim takes over (attempts + 1).</source>
        <translation>保持 processing 状态，租约立即过期；所有者令牌被吊销，原执行者无法再提交，下一次认领将接管（attempts + 1）。</translation>
    </message>
    <message>
        <source>becomes failed (class permanent) with no further retries; the token is revoked. Only a requeue reopens it.</source>
        <translation>变为 failed（类别 permanent），不再重试；令牌被吊销。只有重新入队才能重新打开。</translation>
    </message>
    <message>
        <source>A reason is required; it is kept in the audit trail with your role, user and host.</source>
        <translation>必须填写原因；原因会连同你的角色、用户和主机记入审计记录。</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>%1 – Idem console</source>
        <translation>%1 – Idem 控制台</translation>
    </message>
    <message>
        <source>&lt;li&gt;&lt;tt&gt;%1&lt;/tt&gt; – attempts %2 of %3, updated %4&lt;/li&gt;</source>
        <translation>&lt;li&gt;&lt;tt&gt;%1&lt;/tt&gt; – 尝试 %2/%3 次，更新于 %4&lt;/li&gt;</translation>
    </message>
    <message>
        <source>&lt;li&gt;… and %1 more&lt;/li&gt;</source>
        <translation>&lt;li&gt;……另有 %1 条&lt;/li&gt;</translation>
    </message>
    <message>
        <source>More attempts to grant:</source>
        <translation>追加尝试次数：</translation>
    </message>
    <message numerus="yes">
        <source>&lt;p&gt;&lt;b&gt;%1 %n record(s).&lt;/b&gt; Each %2&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;%1 %n 条记录。&lt;/b&gt;每条记录%2&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>&lt;p style=&apos;margin-bottom:0&apos;&gt;&lt;b&gt;%1&lt;/b&gt;: %n record(s)&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p style=&apos;margin-bottom:0&apos;&gt;&lt;b&gt;%1&lt;/b&gt;：%n 条记录&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message>
        <source>Why (ticket, incident, what you checked)…</source>
        <translation>原因（工单、事故、你检查了什么）…</translation>
    </message>
    <message numerus="yes">
        <source>%1 %n record(s)</source>
        <translation>
            <numerusform>%1 %n 条记录</numerusform>
        </translation>
    </message>
    <message>
        <source>Reason:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>&lt;li&gt;&lt;tt&gt;%1&lt;/tt&gt; – %5, attempts %2 of %3, updated %4&lt;/li&gt;</source>
        <translation>&lt;li&gt;&lt;tt&gt;%1&lt;/tt&gt; – %5，尝试 %2/%3 次，更新于 %4&lt;/li&gt;</translation>
    </message>
    <message>
        <source>&lt;p style=&apos;margin-bottom:0;%3&apos;&gt;&lt;b&gt;Left out&lt;/b&gt; (%1 does not apply to their status; nothing is sent for them): %2&lt;/p&gt;</source>
        <translation>&lt;p style=&apos;margin-bottom:0;%3&apos;&gt;&lt;b&gt;未包含&lt;/b&gt;（%1 不适用于其状态；不会为它们发送任何请求）：%2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Each record is changed only if it still has the status and update time listed here; otherwise it is refused and left as it is.&lt;/p&gt;</source>
        <translation>&lt;p&gt;每条记录只有在仍保持此处列出的状态和更新时间时才会被更改；否则会被拒绝并保持原样。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Re-execute now (a re-driver of the operation runs the stored request again, with the same key)</source>
        <translation>立即重新执行（该操作的重驱器以同一键再次运行已存储的请求）</translation>
    </message>
    <message numerus="yes">
        <source>&lt;p&gt;&lt;b&gt;Re-executed now: %n record(s).&lt;/b&gt; Each gets a re-drive item that a re-driver of its operation takes, running the stored request through the ordinary claim with the same key (one effect, even if its client retries too).</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;立即重新执行：%n 条记录。&lt;/b&gt;每条得到一个重驱项，由其操作的重驱器领取，以同一键经常规认领运行已存储的请求（即使其客户端也在重试，效果只有一次）。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n record(s) requeued only: no re-driver of their operation is online, they wait for their clients.</source>
        <translation>
            <numerusform>%n 条记录仅重新排队：其操作没有在线的重驱器，它们等待各自的客户端。</numerusform>
        </translation>
    </message>
    <message>
        <source>A key not of the form tenant:operation:business_id names no operation: it waits for its client</source>
        <translation>不是 tenant:operation:business_id 形式的键不指明操作：它等待其客户端</translation>
    </message>
</context>
<context>
    <name>idem::console::ApplyAllDialog</name>
    <message>
        <source>Run it from this console (on a connection of its own)</source>
        <translation>从本控制台运行（使用单独的连接）</translation>
    </message>
    <message>
        <source>Start job</source>
        <translation>启动作业</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Apply to all matching</source>
        <translation>应用到所有匹配项</translation>
    </message>
    <message>
        <source>Why (kept in the audit trail with the job)</source>
        <translation>原因（随作业记入审计记录）</translation>
    </message>
    <message>
        <source>Every task the Tasks page&apos;s filters match, not only the rows loaded. The database runs it in small batches; a row that changed since the job&apos;s start is refused and listed, never changed.</source>
        <translation>任务页筛选条件匹配的每个任务，而不只是已加载的行。由数据库分小批执行；作业开始后发生变化的行会被拒绝并列出，绝不会被修改。</translation>
    </message>
    <message>
        <source>Closing the console stops running it here, not the job: it stays active with every batch done so far, and anyone with idem_operator resumes it (Jobs page &gt; Resume, idemctl job resume ID, or CALL idem_job_run(ID) under pg_cron).</source>
        <translation>关闭控制台只会停止在此处运行，作业本身不会停止：它保持活动，已完成的批次全部保留，任何拥有 idem_operator 的人都可以继续它（作业页 &gt; 继续，idemctl job resume ID，或在 pg_cron 中 CALL idem_job_run(ID)）。</translation>
    </message>
    <message>
        <source>Action:</source>
        <translation>操作：</translation>
    </message>
    <message>
        <source>Extra attempts:</source>
        <translation>追加尝试次数：</translation>
    </message>
    <message>
        <source>Filter:</source>
        <translation>筛选：</translation>
    </message>
    <message>
        <source>Matching now:</source>
        <translation>当前匹配：</translation>
    </message>
    <message>
        <source>Cap (rows at most):</source>
        <translation>上限（最多行数）：</translation>
    </message>
    <message>
        <source>Reason:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>What will run:</source>
        <translation>将要执行的内容：</translation>
    </message>
    <message>
        <source>counting…</source>
        <translation>正在计数…</translation>
    </message>
    <message>
        <source>Could not count: %1</source>
        <translation>无法计数：%1</translation>
    </message>
    <message>
        <source>more than %1 tasks match (as of %2): more than one job takes; narrow the filter</source>
        <translation>匹配的任务超过 %1 个（截至 %2）：超出单个作业的容量，请缩小筛选范围</translation>
    </message>
    <message>
        <source>the count is not known yet</source>
        <translation>尚不知道数量</translation>
    </message>
    <message>
        <source>no matching task can be changed by this action</source>
        <translation>没有匹配的任务可由此操作修改</translation>
    </message>
    <message>
        <source>more tasks match than the cap: the job would be refused</source>
        <translation>匹配的任务多于上限：作业将被拒绝</translation>
    </message>
    <message>
        <source>a reason is required</source>
        <translation>必须填写原因</translation>
    </message>
    <message>
        <source>Action: %1 — each task %2</source>
        <translation>操作：%1 —— 每个任务%2</translation>
    </message>
    <message>
        <source>Filter: %1</source>
        <translation>筛选：%1</translation>
    </message>
    <message>
        <source>Count: %1 match now, %2 to change; the job records the rows that match when it starts (its moment), and only those</source>
        <translation>数量：当前匹配 %1 个，待修改 %2 个；作业记录其开始时（其时刻）匹配的行，且只处理这些行</translation>
    </message>
    <message>
        <source>Cap: %1 rows at most</source>
        <translation>上限：最多 %1 行</translation>
    </message>
    <message>
        <source>Runs: from this console now, resumable by anyone if it stops</source>
        <translation>运行：现在从本控制台运行，若停止，任何人都可继续</translation>
    </message>
    <message>
        <source>Runs: not here; start its runner with idemctl job resume ID or pg_cron</source>
        <translation>运行：不在此处；用 idemctl job resume ID 或 pg_cron 启动其运行者</translation>
    </message>
    <message>
        <source>Not yet: %1</source>
        <translation>尚不能启动：%1</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Job %1 started as of %2: %3 matched, %4 to change, %5 skipped. %6</source>
        <translation>作业 %1 已启动，时刻为 %2：匹配 %3 个，待修改 %4 个，跳过 %5 个。%6</translation>
    </message>
    <message>
        <source>Running from this console; follow it on the Jobs page.</source>
        <translation>正在从本控制台运行；请在作业页查看进度。</translation>
    </message>
    <message>
        <source>Not running yet: resume it from the Jobs page or idemctl.</source>
        <translation>尚未运行：请从作业页或 idemctl 继续它。</translation>
    </message>
    <message>
        <source>Not started, nothing changed: %1</source>
        <translation>未启动，未做任何修改：%1</translation>
    </message>
    <message>
        <source>%1 tasks match (as of %2): the action applies to %3, skips %4</source>
        <translation>%1 个任务匹配（截至 %2）：此操作适用于 %3 个，跳过 %4 个</translation>
    </message>
    <message>
        <source>%1 (attempts +%2)</source>
        <translation>%1（尝试次数 +%2）</translation>
    </message>
    <message>
        <source>%1 rows to change, more than the approval policy&apos;s %2 for a job without a second person</source>
        <translation>待修改 %1 行，超过审批策略允许作业在无第二人审批时修改的 %2 行</translation>
    </message>
    <message>
        <source>this login changed %1 rows without approval in the last %2, and the approval policy allows %3 without a second person</source>
        <translation>此登录名在过去 %2 内未经审批修改了 %1 行，而审批策略只允许无第二人审批时修改 %3 行</translation>
    </message>
    <message>
        <source>Approval: needed (%1). The job waits for approval by a holder of approve (another login with the approve right), then runs; until then nothing changes.</source>
        <translation>审批：需要（%1）。作业将等待拥有 approve 权限者（另一个拥有审批权限的登录名）审批，然后运行；在此之前不做任何修改。</translation>
    </message>
    <message>
        <source>Runs: from this console once approved, while it stays open; resumable by anyone after</source>
        <translation>运行：获批后从本控制台运行（控制台须保持打开）；之后任何人都可继续</translation>
    </message>
    <message>
        <source>Runs: not here; once approved, start its runner with idemctl job resume ID or pg_cron</source>
        <translation>运行：不在此处；获批后用 idemctl job resume ID 或 pg_cron 启动其运行者</translation>
    </message>
    <message>
        <source>Job %1 is waiting for approval by a holder of approve (another login with the approve right): %2 rows to change, nothing changed yet. %3</source>
        <translation>作业 %1 正在等待拥有 approve 权限者（另一个拥有审批权限的登录名）审批：待修改 %2 行，尚未做任何修改。%3</translation>
    </message>
    <message>
        <source>This console runs it as soon as it is approved, while it stays open; follow it on the Jobs page.</source>
        <translation>一经批准，本控制台即运行它（控制台须保持打开）；请在作业页查看进度。</translation>
    </message>
    <message>
        <source>Once approved, resume it from the Jobs page or idemctl.</source>
        <translation>获批后，请从作业页或 idemctl 继续它。</translation>
    </message>
    <message>
        <source>Re-execute now: each requeued key&apos;s stored request runs again on a re-driver of its operation, with the same key</source>
        <translation>立即重新执行：每个重新排队的键的已存储请求由其操作的重驱器以同一键再次运行</translation>
    </message>
    <message>
        <source>Re-execution:</source>
        <translation>重新执行：</translation>
    </message>
    <message>
        <source>Only a requeue re-executes.</source>
        <translation>只有重新排队才会重新执行。</translation>
    </message>
    <message>
        <source>Re-execution: each requeued key with a stored request gets a re-drive item that its operation&apos;s re-drivers run with the same key (%1); the Jobs page shows their outcomes. A key without one waits for its client.</source>
        <translation>重新执行：每个有已存储请求的重新排队键得到一个重驱项，由其操作的重驱器以同一键运行（%1）；“作业”页显示其结果。没有已存储请求的键等待其客户端。</translation>
    </message>
</context>
<context>
    <name>idem::console::ApprovalsDialog</name>
    <message>
        <source>Approvals – Idem console</source>
        <translation>审批 – Idem 控制台</translation>
    </message>
    <message>
        <source>Reason for the audit trail (required)</source>
        <translation>记入审计记录的原因（必填）</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>批准</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>The schema is newer than this console, or its migrations do not match: look, change nothing.</source>
        <translation>模式比此控制台新，或其迁移不匹配：只能查看，不做任何更改。</translation>
    </message>
    <message>
        <source>Give a reason: it goes into the audit trail.</source>
        <translation>请填写原因：它会记入审计记录。</translation>
    </message>
    <message>
        <source>Nothing is waiting for approval.</source>
        <translation>没有等待审批的内容。</translation>
    </message>
    <message>
        <source>Could not read what is waiting for approval: %1</source>
        <translation>无法读取等待审批的内容：%1</translation>
    </message>
    <message>
        <source>Requests waiting for a second person: recovery jobs, retention changes and manual purges, when the approval policy holds them. Approving one lets exactly what is listed run (its spec sha256 is named); declining one turns it down (a job&apos;s: the job is cancelled). You cannot approve what your own login requested.</source>
        <translation>等待第二人审批的请求：审批策略要求审批的恢复作业、保留期变更和手动清理。批准一项即只允许所列内容运行（指明其规格 sha256）；拒绝一项即驳回它（作业的请求被拒绝时，该作业被取消）。你不能批准自己的登录名发起的请求。</translation>
    </message>
    <message>
        <source>Decline</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Select the request to approve.</source>
        <translation>请选择要批准的请求。</translation>
    </message>
    <message>
        <source>Approve the selected request exactly as listed (its spec sha256 is named).</source>
        <translation>按所列内容原样批准所选请求（指明其规格 sha256）。</translation>
    </message>
    <message>
        <source>Select the request to decline.</source>
        <translation>请选择要拒绝的请求。</translation>
    </message>
    <message>
        <source>Turn the selected request down: it can no longer be approved (a job&apos;s request declined cancels the job).</source>
        <translation>驳回所选请求：它将不能再被批准（作业的请求被拒绝时，该作业被取消）。</translation>
    </message>
</context>
<context>
    <name>idem::console::ApprovalsModel</name>
    <message>
        <source>Request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>What</source>
        <translation>内容</translation>
    </message>
    <message>
        <source>Requested by</source>
        <translation>请求者</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Until</source>
        <translation>截止</translation>
    </message>
    <message>
        <source>Spec sha256</source>
        <translation>规格 sha256</translation>
    </message>
    <message>
        <source>Select the request to approve or decline.</source>
        <translation>请选择要批准或拒绝的请求。</translation>
    </message>
    <message>
        <source>Its approval expired: it can no longer be used.</source>
        <translation>其批准已过期：不能再执行。</translation>
    </message>
    <message>
        <source>Approved already by %1: it waits to be used.</source>
        <translation>已由 %1 批准：等待执行。</translation>
    </message>
    <message>
        <source>Its time for approval ended: it can no longer be approved.</source>
        <translation>其审批期限已过：不能再批准。</translation>
    </message>
    <message>
        <source>Spec sha256 %1</source>
        <translation>规格 sha256 %1</translation>
    </message>
    <message>
        <source>%1 (expired)</source>
        <translation>%1（已过期）</translation>
    </message>
    <message>
        <source>%1 (approved; may run until then)</source>
        <translation>%1（已批准；在此之前可运行）</translation>
    </message>
    <message>
        <source>%1 (approved; to be used by then)</source>
        <translation>%1（已批准；须在此前执行）</translation>
    </message>
    <message>
        <source>Request %1 declined: job %2 is cancelled, nothing of it ran. Audit entry #%3.</source>
        <translation>请求 %1 已拒绝：作业 %2 已取消，其任何部分都未运行。审计条目 #%3。</translation>
    </message>
    <message>
        <source>Request %1 declined: it can no longer be approved or used. Audit entry #%2.</source>
        <translation>请求 %1 已拒绝：它不能再被批准或使用。审计条目 #%2。</translation>
    </message>
    <message>
        <source>Job %1 approved: the console that requested it runs it now if it is still open; else anyone with its action&apos;s right resumes it (Jobs page &gt; Resume, idemctl job resume %1) until %2. Audit entry #%3.</source>
        <translation>作业 %1 已批准：若申请它的控制台仍打开，该控制台现在就运行它；否则拥有其操作权限的任何人都可在 %2 之前继续它（作业页 &gt; 在此继续，idemctl job resume %1）。审计条目 #%3。</translation>
    </message>
    <message>
        <source>Change request %1 approved: it may be used once until %2. Audit entry #%3.</source>
        <translation>变更请求 %1 已批准：可在 %2 之前执行一次。审计条目 #%3。</translation>
    </message>
    <message>
        <source>Not approved: %1</source>
        <translation>未批准：%1</translation>
    </message>
    <message>
        <source>Not declined: %1</source>
        <translation>未拒绝：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::AuditEntryView</name>
    <message>
        <source>Select an entry to see what it changed.</source>
        <translation>选择一条记录以查看它所做的更改。</translation>
    </message>
    <message>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <source>Before</source>
        <translation>修改前</translation>
    </message>
    <message>
        <source>After</source>
        <translation>修改后</translation>
    </message>
</context>
<context>
    <name>idem::console::AuditModel</name>
    <message>
        <source>At</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>动作</translation>
    </message>
    <message>
        <source>Actor</source>
        <translation>执行者</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>%1 (%2 from %3)</source>
        <translation>%1（%2，来自 %3）</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
</context>
<context>
    <name>idem::console::AuditWidget</name>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Verify chain</source>
        <translation>校验哈希链</translation>
    </message>
    <message>
        <source>key (exact)</source>
        <translation>键（精确匹配）</translation>
    </message>
    <message>
        <source>actor (role or OS user)</source>
        <translation>执行者（角色或操作系统用户）</translation>
    </message>
    <message>
        <source>Any action</source>
        <translation>任意动作</translation>
    </message>
    <message>
        <source>since (ISO time)</source>
        <translation>起始（ISO 时间）</translation>
    </message>
    <message>
        <source>until (ISO time)</source>
        <translation>截止（ISO 时间）</translation>
    </message>
    <message>
        <source>Verifying every entry&apos;s hash and link…</source>
        <translation>正在校验每条记录的哈希和链接…</translation>
    </message>
    <message>
        <source>Could not verify: %1</source>
        <translation>无法校验：%1</translation>
    </message>
    <message>
        <source>“%1” is not an ISO 8601 time such as 2024-05-01 or 2024-05-01T10:00:00Z</source>
        <translation>“%1”不是 ISO 8601 时间，例如 2024-05-01 或 2024-05-01T10:00:00Z</translation>
    </message>
    <message>
        <source>&lt;b&gt;#%1 %2&lt;/b&gt; on &lt;tt&gt;%3&lt;/tt&gt; at %4 by %5 (OS user %6, host %7, %8)</source>
        <translation>&lt;b&gt;#%1 %2&lt;/b&gt;，对象 &lt;tt&gt;%3&lt;/tt&gt;，时间 %4，执行者 %5（操作系统用户 %6，主机 %7，%8）</translation>
    </message>
    <message>
        <source>, head #%1 %2</source>
        <translation>，链头 #%1 %2</translation>
    </message>
    <message>
        <source>Accept current trail</source>
        <translation>接受当前审计链</translation>
    </message>
    <message>
        <source>Forget the entry this console verified and remember the current trail&apos;s head instead, once its whole chain verifies. Only this console&apos;s settings change: nothing is written to the database and nothing is audited.</source>
        <translation>忘记本控制台已验证的条目，在整条链验证通过后改为记住当前审计链的链头。只改变本控制台的设置：不写入数据库，也不记入审计。</translation>
    </message>
    <message>
        <source>Audit trail witness:</source>
        <translation>审计链见证：</translation>
    </message>
    <message>
        <source>Recompute every entry&apos;s hash and link (%1)</source>
        <translation>重新计算每条记录的哈希和链接（%1）</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;%3&apos;&gt;Chain intact:&lt;/span&gt; %1 entries verified%2.</source>
        <translation>&lt;span style=&apos;%3&apos;&gt;哈希链完好：&lt;/span&gt;已校验 %1 条记录%2。</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;%5&apos;&gt;&lt;b&gt;Chain broken at entry #%1&lt;/b&gt; (%2):&lt;/span&gt; %3 (%4 entries verified before it)</source>
        <translation>&lt;span style=&apos;%5&apos;&gt;&lt;b&gt;哈希链在记录 #%1 处断开&lt;/b&gt;（%2）：&lt;/span&gt;%3（其前已校验 %4 条记录）</translation>
    </message>
</context>
<context>
    <name>idem::console::AuditWitness</name>
    <message>
        <source>at an unknown time</source>
        <translation>未知时间</translation>
    </message>
    <message>
        <source>The audit trail could not be verified: %1</source>
        <translation>无法验证审计链：%1</translation>
    </message>
    <message>
        <source>The audit trail is empty; this console remembers its head from the first entry on.</source>
        <translation>审计链为空；本控制台从第一个条目起记住其链头。</translation>
    </message>
    <message>
        <source>This console verified the audit trail up to entry %1 (hash %2, verified %3); it is intact.</source>
        <translation>本控制台已验证审计链至条目 %1（哈希 %2，验证于 %3）；审计链完好。</translation>
    </message>
    <message>
        <source>The audit trail is shorter than when this console last verified it: entry %1 (verified %2) is gone; the trail now ends at entry %3. Someone with the owner&apos;s rights removed entries.</source>
        <translation>审计链比本控制台上次验证时更短：条目 %1（验证于 %2）已不存在；审计链现在止于条目 %3。拥有属主权限的人删除了条目。</translation>
    </message>
    <message>
        <source>The audit trail is shorter than when this console last verified it: entry %1 (verified %2) is gone; the trail is now empty. Someone with the owner&apos;s rights removed entries.</source>
        <translation>审计链比本控制台上次验证时更短：条目 %1（验证于 %2）已不存在；审计链现在为空。拥有属主权限的人删除了条目。</translation>
    </message>
    <message>
        <source>This server is a standby: if it is still replaying, this clears once it catches up.</source>
        <translation>此服务器是备库：如果它仍在回放，追上后此提示会消失。</translation>
    </message>
    <message>
        <source>The audit trail was rewritten: entry %1 is not the entry this console verified %2 (hash %3). Someone with the owner&apos;s rights removed entries and wrote others in their place.</source>
        <translation>审计链被改写：条目 %1 不是本控制台于 %2 验证的那个条目（哈希 %3）。拥有属主权限的人删除了条目，并写入了其他条目取而代之。</translation>
    </message>
    <message>
        <source>the entry was changed after it was written</source>
        <translation>该条目在写入后被修改</translation>
    </message>
    <message>
        <source>the entry is missing (deleted)</source>
        <translation>该条目缺失（已删除）</translation>
    </message>
    <message>
        <source>it does not follow on from the entry before it (entries were reordered or replaced)</source>
        <translation>它没有接续前一个条目（条目被重排或替换）</translation>
    </message>
    <message>
        <source>The audit trail&apos;s hash chain is broken at entry %1: %2. Someone with the owner&apos;s rights changed the trail.</source>
        <translation>审计链的哈希链在条目 %1 处断开：%2。拥有属主权限的人修改了审计链。</translation>
    </message>
</context>
<context>
    <name>idem::console::BreakdownModel</name>
    <message>
        <source> (at least: only the newest %1 unfinished rows were read)</source>
        <translation>（至少：只读取了最新的 %1 行未完成记录）</translation>
    </message>
    <message>
        <source>At least: the first %1 processing rows were read.</source>
        <translation>至少：只读取了前 %1 行处理中的记录。</translation>
    </message>
    <message>
        <source>Exact: rows processing now.</source>
        <translation>精确：当前处理中的行数。</translation>
    </message>
    <message>
        <source>At least: the window&apos;s per-minute counters were read up to %1 rows.</source>
        <translation>至少：窗口内的每分钟计数器最多读取了 %1 行。</translation>
    </message>
    <message>
        <source>Exact: the per-minute counters of the %1.</source>
        <translation>精确：%1的每分钟计数器。</translation>
    </message>
    <message>
        <source>p95 run time of %1 runs in the window&apos;s folded minutes (within 3.7 %)%2.</source>
        <translation>窗口内已汇总分钟中 %1 次运行的 p95 运行时间（误差 3.7 % 以内）%2。</translation>
    </message>
    <message>
        <source>, from the first latency rows read only</source>
        <translation>，仅来自最先读取的延迟行</translation>
    </message>
    <message>
        <source>No run folded in the window.</source>
        <translation>窗口内没有已汇总的运行。</translation>
    </message>
    <message>
        <source>Double-click to open the rows of %1 updated in the %2.</source>
        <translation>双击打开 %1 在%2内更新的记录。</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>Top errors of the window</source>
        <translation>窗口内最常见的错误</translation>
    </message>
    <message>
        <source>Processing</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>Conflicts</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>p95 run</source>
        <translation>p95 运行</translation>
    </message>
    <message>
        <source>%1: error &quot;%2&quot;</source>
        <translation>%1：错误“%2”</translation>
    </message>
    <message>
        <source>Operation %1</source>
        <translation>操作 %1</translation>
    </message>
    <message>
        <source>Tenant %1, operation %2</source>
        <translation>租户 %1，操作 %2</translation>
    </message>
    <message>
        <source>Last read failed: %1</source>
        <translation>上次读取失败：%1</translation>
    </message>
    <message>
        <source>%1 unfinished rows of %2, updated in the %3, whose last error contains this text%4. Double-click to open them.</source>
        <translation>%2 有 %1 行未完成记录在%3内更新，其最近一次错误包含此文本%4。双击打开这些记录。</translation>
    </message>
    <message>
        <source>In the %1: failures, retries and conflicts counted per minute; processing now; p95 of the folded minutes; ≥ n: at least n (read up to the cap).</source>
        <translation>%1内：失败、重试和冲突按分钟计数；处理中为当前值；p95 基于已汇总的分钟；≥ n：至少 n（读取达到上限）。</translation>
    </message>
    <message>
        <source>Failures</source>
        <translation>失败次数</translation>
    </message>
    <message>
        <source>Retries</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Last read failed (tooltip).</source>
        <translation>上次读取失败（见提示）。</translation>
    </message>
    <message>
        <source>%1; ≥ n: at least n</source>
        <translation>%1；≥ n：至少 n</translation>
    </message>
</context>
<context>
    <name>idem::console::BreakdownPanel</name>
    <message>
        <source>Where it is failing</source>
        <translation>哪里在失败</translation>
    </message>
    <message>
        <source>By tenant</source>
        <translation>按租户</translation>
    </message>
    <message>
        <source>One row per tenant and operation instead of one per operation.</source>
        <translation>每个租户和操作各占一行，而不是每个操作一行。</translation>
    </message>
    <message>
        <source>Double-click a row to open its tasks.</source>
        <translation>双击某行打开其任务。</translation>
    </message>
    <message>
        <source>Double-click an error to open the tasks that failed with it.</source>
        <translation>双击某个错误打开因它失败的任务。</translation>
    </message>
</context>
<context>
    <name>idem::console::BulkActionModel</name>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Status now</source>
        <translation>当前状态</translation>
    </message>
    <message>
        <source>Updated now</source>
        <translation>当前更新时间</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>%1 of %2 done</source>
        <translation>已完成 %1/%2</translation>
    </message>
    <message>
        <source>%1 (a key that was in progress may have been applied: the Audit page says)</source>
        <translation>%1（进行中的键可能已被应用：请查看审计页）</translation>
    </message>
    <message>
        <source>cancelled before this key</source>
        <translation>在处理此键之前已取消</translation>
    </message>
</context>
<context>
    <name>idem::console::ChartPanel</name>
    <message>
        <source>Processing vs expired leases</source>
        <translation>处理中与过期租约</translation>
    </message>
    <message>
        <source>processing</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>expired</source>
        <translation>已过期</translation>
    </message>
    <message>
        <source>Claim outcomes per minute</source>
        <translation>每分钟认领结果</translation>
    </message>
    <message>
        <source>new</source>
        <translation>新建</translation>
    </message>
    <message>
        <source>replay</source>
        <translation>重放</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>进行中</translation>
    </message>
    <message>
        <source>conflict</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>reclaim</source>
        <translation>重新认领</translation>
    </message>
    <message>
        <source>Duplicate ratio per minute</source>
        <translation>每分钟重复率</translation>
    </message>
    <message>
        <source>duplicate ratio</source>
        <translation>重复率</translation>
    </message>
    <message>
        <source>Retries and failures per minute</source>
        <translation>每分钟重试与失败</translation>
    </message>
    <message>
        <source>retries</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>failed retries</source>
        <translation>失败的重试</translation>
    </message>
    <message>
        <source>permanent</source>
        <translation>永久失败</translation>
    </message>
    <message>
        <source>Console load: ms per tick</source>
        <translation>控制台负载：每次轮询毫秒数</translation>
    </message>
    <message>
        <source>tick ms</source>
        <translation>轮询毫秒</translation>
    </message>
    <message>
        <source>Attempts among unfinished rows</source>
        <translation>未完成行的尝试次数分布</translation>
    </message>
    <message>
        <source>rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>Complete minutes only: the current minute is still counting and is drawn once it is over.</source>
        <translation>只显示完整的分钟：当前分钟仍在计数，结束后才会画出。</translation>
    </message>
    <message>
        <source>One point per tick; a gap is a time the console could not read.</source>
        <translation>每次轮询一个点；空缺表示控制台无法读取的时间。</translation>
    </message>
    <message>
        <source>retry later</source>
        <translation>稍后重试</translation>
    </message>
    <message>
        <source>rejected, failed</source>
        <translation>已拒绝（已失败）</translation>
    </message>
    <message>
        <source>failed, retryable</source>
        <translation>失败（可重试）</translation>
    </message>
    <message>
        <source>failed, unknown</source>
        <translation>失败（结果未知）</translation>
    </message>
    <message>
        <source>exhausted</source>
        <translation>已耗尽</translation>
    </message>
    <message>
        <source>stale tokens</source>
        <translation>过期令牌</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>Completions per minute</source>
        <translation>每分钟完成数</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>An amber band: intake of this scope was paused (claims turned away).</source>
        <translation>琥珀色区带：此范围的接收已暂停（认领被拒）。</translation>
    </message>
    <message>
        <source>intake paused</source>
        <translation>接收已暂停</translation>
    </message>
    <message>
        <source>More events in this window are not marked: the list is full and this server (before schema v24) does not count the rest. Narrow the window to see them.</source>
        <translation>此时间窗口内还有更多事件未标记：列表已满，且此服务器（架构 v24 之前）不统计其余事件。缩小时间窗口即可看到。</translation>
    </message>
    <message numerus="yes">
        <source>%n more event(s) in this window not marked: each kind (operators&apos; actions, deploys, failovers) marks its newest %1. Narrow the window to see them.</source>
        <translation>
            <numerusform>此时间窗口内还有 %n 个事件未标记：每类事件（操作员操作、部署、故障切换）只标记最新的 %1 个。缩小时间窗口即可看到。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::ClusterPanel</name>
    <message>
        <source>Patroni&apos;s REST API is unreachable: %1. The members below are as read %2.</source>
        <translation>无法访问 Patroni 的 REST API：%1。下面的成员是 %2 读取的。</translation>
    </message>
    <message>
        <source>Patroni&apos;s REST API is unreachable: %1</source>
        <translation>无法访问 Patroni 的 REST API：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n member(s), leader %1; read %2 from %3</source>
        <translation>
            <numerusform>%n 个成员，领导者 %1；%2 读自 %3</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n member(s) and no leader: a failover is under way or the cluster cannot elect one; read %1 from %2</source>
        <translation>
            <numerusform>%n 个成员，没有领导者：正在故障转移，或集群无法选出领导者；%1 读自 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>maintenance mode: Patroni fails nothing over until it is resumed</source>
        <translation>维护模式：恢复之前 Patroni 不会进行任何故障转移</translation>
    </message>
    <message>
        <source>a switchover is scheduled at %1</source>
        <translation>已计划于 %1 进行切换</translation>
    </message>
    <message>
        <source>this console&apos;s server (%1) is none of these members&apos; addresses: another cluster, or reached through another address</source>
        <translation>本控制台的服务器（%1）不是这些成员中任何一个的地址：另一个集群，或经由其他地址到达</translation>
    </message>
    <message>
        <source>Patroni and the server disagree (the Node line above is the server&apos;s own answer):
%1</source>
        <translation>Patroni 与服务器的说法不一致（上面的“节点”行是服务器自己的回答）：
%1</translation>
    </message>
</context>
<context>
    <name>idem::console::ConnectionDialog</name>
    <message>
        <source>Connect to PostgreSQL</source>
        <translation>连接到 PostgreSQL</translation>
    </message>
    <message>
        <source>name this connection to save it</source>
        <translation>为此连接命名以便保存</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Save these fields as a profile. The password is never saved.</source>
        <translation>将这些字段保存为配置。密码永远不会被保存。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>host=db.example.com dbname=app user=alice, postgresql://…, or a service name</source>
        <translation>host=db.example.com dbname=app user=alice、postgresql://… 或服务名</translation>
    </message>
    <message>
        <source>optional: ~/.pgpass or PGPASSWORD otherwise; never saved</source>
        <translation>可选：否则使用 ~/.pgpass 或 PGPASSWORD；永不保存</translation>
    </message>
    <message>
        <source>optional: a standby for the dashboard and task reads (same server if empty)</source>
        <translation>可选：供仪表盘和任务读取使用的备库（为空则使用同一服务器）</translation>
    </message>
    <message>
        <source>Anything left out comes from PG* variables, pg_service.conf and ~/.pgpass, as in psql.</source>
        <translation>未填写的项与 psql 一样取自 PG* 环境变量、pg_service.conf 和 ~/.pgpass。</translation>
    </message>
    <message>
        <source>&amp;Profile:</source>
        <translation>配置(&amp;P)：</translation>
    </message>
    <message>
        <source>C&amp;onnection:</source>
        <translation>连接(&amp;O)：</translation>
    </message>
    <message>
        <source>Pass&amp;word:</source>
        <translation>密码(&amp;W)：</translation>
    </message>
    <message>
        <source>&amp;Schema:</source>
        <translation>模式(&amp;S)：</translation>
    </message>
    <message>
        <source>&amp;Monitor:</source>
        <translation>监控连接(&amp;M)：</translation>
    </message>
    <message>
        <source>(as in the connection)</source>
        <translation>（与连接中的设置相同）</translation>
    </message>
    <message>
        <source>Certificates (*.crt *.pem *.cer);;All files (*)</source>
        <translation>证书 (*.crt *.pem *.cer);;所有文件 (*)</translation>
    </message>
    <message>
        <source>SSL &amp;mode:</source>
        <translation>SSL 模式(&amp;M)：</translation>
    </message>
    <message>
        <source>&amp;Root certificate:</source>
        <translation>根证书(&amp;R)：</translation>
    </message>
    <message>
        <source>Root certificate</source>
        <translation>根证书</translation>
    </message>
    <message>
        <source>Client &amp;certificate:</source>
        <translation>客户端证书(&amp;C)：</translation>
    </message>
    <message>
        <source>Client certificate</source>
        <translation>客户端证书</translation>
    </message>
    <message>
        <source>Client &amp;key:</source>
        <translation>客户端密钥(&amp;K)：</translation>
    </message>
    <message>
        <source>Client key</source>
        <translation>客户端密钥</translation>
    </message>
    <message>
        <source>Keys (*.key *.pem);;All files (*)</source>
        <translation>密钥 (*.key *.pem);;所有文件 (*)</translation>
    </message>
    <message>
        <source>TLS</source>
        <translation>TLS</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>选择文件</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>正在连接到 %1…</translation>
    </message>
    <message>
        <source>Type a name for the profile first.</source>
        <translation>请先输入配置名称。</translation>
    </message>
    <message>
        <source>Not saved: the connection string is not valid: %1</source>
        <translation>未保存：连接字符串无效：%1</translation>
    </message>
    <message>
        <source>optional: prod, staging, dev… shown on every window of this connection</source>
        <translation>可选：prod、staging、dev…，显示在此连接的每个窗口上</translation>
    </message>
    <message>
        <source>(by its name)</source>
        <translation>（按名称）</translation>
    </message>
    <message>
        <source>red</source>
        <translation>红色</translation>
    </message>
    <message>
        <source>amber</source>
        <translation>琥珀色</translation>
    </message>
    <message>
        <source>green</source>
        <translation>绿色</translation>
    </message>
    <message>
        <source>blue</source>
        <translation>蓝色</translation>
    </message>
    <message>
        <source>purple</source>
        <translation>紫色</translation>
    </message>
    <message>
        <source>grey</source>
        <translation>灰色</translation>
    </message>
    <message>
        <source>&amp;Environment:</source>
        <translation>环境(&amp;E)：</translation>
    </message>
    <message>
        <source>optional: Patroni&apos;s REST API, http://host:8008 (several: comma-separated); no password</source>
        <translation>可选：Patroni 的 REST API，http://host:8008（多个用逗号分隔）；不含密码</translation>
    </message>
    <message>
        <source>Pa&amp;troni:</source>
        <translation>Patroni(&amp;T)：</translation>
    </message>
    <message>
        <source>Patroni: %1</source>
        <translation>Patroni：%1</translation>
    </message>
    <message>
        <source>Not saved: Patroni: %1</source>
        <translation>未保存：Patroni：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::ConsoleSession</name>
    <message>
        <source>the connection is being re-established</source>
        <translation>连接正在重新建立</translation>
    </message>
    <message>
        <source>disconnected</source>
        <translation>已断开连接</translation>
    </message>
    <message>
        <source>not connected</source>
        <translation>未连接</translation>
    </message>
    <message>
        <source>the connection was lost</source>
        <translation>连接已丢失</translation>
    </message>
    <message>
        <source>the console closed it: the server answered neither the read nor a request to cancel it (its server process may be stopped, or the network cut)</source>
        <translation>控制台已将其关闭：服务器既未响应读取，也未响应取消请求（其服务器进程可能已停止，或网络已断开）</translation>
    </message>
    <message>
        <source>Schema %1 has version %2, older than this console (%3): upgrade the schema first.</source>
        <translation>schema %1 的版本为 %2，早于本控制台的版本（%3）：请先升级 schema。</translation>
    </message>
</context>
<context>
    <name>idem::console::ConsoleWidget</name>
    <message>
        <source>Connection</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Migrating schema %1 to version %2 (the bundled migrations, as idemctl migrate runs them)…</source>
        <translation>正在将模式 %1 迁移到版本 %2（使用内置迁移，与 idemctl migrate 相同）…</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>Connect…</source>
        <translation>连接…</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>%1
Reconnecting in %2 s.</source>
        <translation>%1
%2 秒后重新连接。</translation>
    </message>
    <message>
        <source>Reconnect now</source>
        <translation>立即重新连接</translation>
    </message>
    <message>
        <source>%1
A role that owns the schema (or a superuser) can run: idemctl migrate --schema %2</source>
        <translation>%1
拥有该模式的角色（或超级用户）可以运行：idemctl migrate --schema %2</translation>
    </message>
    <message>
        <source>Role %1 cannot read schema %2 (%3). Grant it idem_reader: GRANT idem_reader TO %1;</source>
        <translation>角色 %1 无法读取模式 %2（%3）。请授予 idem_reader：GRANT idem_reader TO %1;</translation>
    </message>
    <message>
        <source>Schema %1 cannot be inspected: %2</source>
        <translation>无法检查模式 %1：%2</translation>
    </message>
    <message>
        <source>Schema %1 does not match this console: %2. The console is read-only.</source>
        <translation>模式 %1 与此控制台不匹配：%2。控制台处于只读状态。</translation>
    </message>
    <message>
        <source>Schema %1 has version %2, newer than this console knows (%3). The console is read-only until Idem is upgraded.</source>
        <translation>模式 %1 的版本为 %2，比此控制台已知的版本（%3）新。在升级 Idem 之前控制台处于只读状态。</translation>
    </message>
    <message>
        <source> The existing %1 table will be adopted in place, its rows kept.</source>
        <translation>现有的 %1 表将被原地接管，其中的行保留不变。</translation>
    </message>
    <message>
        <source>This database has no Idem schema %1 yet.%2
Create schema runs the migrations this console ships (as idemctl migrate does) and sets up the idem_reader, idem_operator and idem_worker roles.</source>
        <translation>此数据库中还没有 Idem 模式 %1。%2
“创建模式”会运行此控制台自带的迁移（与 idemctl migrate 相同），并建立 idem_reader、idem_operator 和 idem_worker 角色。</translation>
    </message>
    <message>
        <source>Create schema</source>
        <translation>创建模式</translation>
    </message>
    <message>
        <source>Schema %1 has version %2; this console ships version %3.</source>
        <translation>模式 %1 的版本为 %2；此控制台自带版本 %3。</translation>
    </message>
    <message>
        <source>Upgrade schema</source>
        <translation>升级模式</translation>
    </message>
    <message>
        <source>Role %1 cannot read %2. Grant it idem_reader: GRANT idem_reader TO %1;</source>
        <translation>角色 %1 无法读取 %2。请授予 idem_reader：GRANT idem_reader TO %1;</translation>
    </message>
    <message>
        <source>Acknowledge</source>
        <translation>知道了</translation>
    </message>
    <message>
        <source>Patroni cluster</source>
        <translation>Patroni 集群</translation>
    </message>
</context>
<context>
    <name>idem::console::DashboardModel</name>
    <message>
        <source>last %1 h</source>
        <translation>最近 %1 小时</translation>
    </message>
    <message>
        <source>last %1 min</source>
        <translation>最近 %1 分钟</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>Role %1 may not read the Idem tables.</source>
        <translation>角色 %1 无权读取 Idem 表。</translation>
    </message>
    <message>
        <source>No Idem schema %1 to read yet.</source>
        <translation>还没有可读取的 Idem 模式 %1。</translation>
    </message>
    <message>
        <source>Reconnected; reading…</source>
        <translation>已重新连接；正在读取…</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>live leases</source>
        <translation>有效租约</translation>
    </message>
    <message>
        <source>processing, lease ran out</source>
        <translation>处理中，租约已到期</translation>
    </message>
    <message>
        <source>no claims, %1</source>
        <translation>无认领，%1</translation>
    </message>
    <message>
        <source>%1 permanent · %2 exhausted</source>
        <translation>%1 永久失败 · %2 次数耗尽</translation>
    </message>
    <message>
        <source>retryable, effect unknown</source>
        <translation>可重试，效果未知</translation>
    </message>
    <message>
        <source>since first seen</source>
        <translation>自首次出现起</translation>
    </message>
    <message>
        <source>nothing processing</source>
        <translation>没有处理中的任务</translation>
    </message>
    <message>
        <source>estimate (planner statistics)</source>
        <translation>估计值（规划器统计）</translation>
    </message>
    <message>
        <source>estimate: not analysed yet</source>
        <translation>估计值：尚未 ANALYZE</translation>
    </message>
    <message>
        <source>exact %1 · %2 ago</source>
        <translation>精确值 %1 · %2前</translation>
    </message>
    <message>
        <source>counted up to %1; exact count pending</source>
        <translation>最多计数到 %1；精确计数尚未完成</translation>
    </message>
    <message>
        <source>in flight after %1 min</source>
        <translation>超过 %1 分钟仍在执行</translation>
    </message>
    <message>
        <source>%1 %2 (%3 % of claims; red from %4 %)</source>
        <translation>%1 %2（占认领的 %3 %；红色阈值 %4 %）</translation>
    </message>
    <message>
        <source>%1 %2 (red from %3)</source>
        <translation>%1 %2（红色阈值 %3）</translation>
    </message>
    <message>
        <source>%1 % of claims, %2</source>
        <translation>占认领的 %1 %，%2</translation>
    </message>
    <message>
        <source>retryable_failed now</source>
        <translation>当前处于 retryable_failed</translation>
    </message>
    <message>
        <source>rows in processing with a live lease</source>
        <translation>租约仍有效的 processing 行</translation>
    </message>
    <message>
        <source>rows in processing whose lease ran out</source>
        <translation>租约已到期的 processing 行</translation>
    </message>
    <message>
        <source>rows waiting to retry (retryable_failed)</source>
        <translation>等待重试的行（retryable_failed）</translation>
    </message>
    <message>
        <source>rows waiting to retry whose last outcome is unknown</source>
        <translation>最后一次结果未知、等待重试的行</translation>
    </message>
    <message>
        <source>rows processing or waiting to retry, first seen over %1 min ago</source>
        <translation>首次出现超过 %1 分钟、仍在处理或等待重试的行</translation>
    </message>
    <message>
        <source>rows in failed</source>
        <translation>failed 状态的行</translation>
    </message>
    <message>
        <source>keys on attempt 2 or later, updated in the %1 (the tile counts takeovers)</source>
        <translation>处于第 2 次或之后尝试、在%1内更新过的键（磁贴统计的是接管次数）</translation>
    </message>
    <message>
        <source>keys with a digest conflict in the %1 (the tile counts conflicting claims)</source>
        <translation>在%1内发生过摘要冲突的键（磁贴统计的是冲突的认领次数）</translation>
    </message>
    <message>
        <source>every row</source>
        <translation>所有行</translation>
    </message>
    <message>
        <source>estimate (live-row counter: not analysed yet)</source>
        <translation>估计值（活动行计数，尚未 ANALYZE）</translation>
    </message>
    <message>
        <source>keys with a failure of attempt 2 or later in the %1, whatever their status now (the tile counts failures: a key that failed twice counts twice)</source>
        <translation>在%1内第 2 次或之后的尝试失败过的键，不论其当前状态（磁贴统计的是失败次数：失败两次的键计两次）</translation>
    </message>
    <message>
        <source>It would open the keys whose claims were answered as duplicates, but a replayed or in-progress answer leaves no mark on the row, so those keys cannot be found. Digest conflicts opens the keys with a conflicting claim.</source>
        <translation>本应打开被判为重复的认领所对应的键，但重放或“进行中”的应答不会在行上留下任何痕迹，因此无法找出这些键。“摘要冲突”可打开有冲突认领的键。</translation>
    </message>
    <message>
        <source>It would open the keys whose late workers were turned away, but a rejected stale token leaves no mark on the row, so those keys cannot be found.</source>
        <translation>本应打开迟到的 worker 被拒绝的键，但被拒绝的过期令牌不会在行上留下任何痕迹，因此无法找出这些键。</translation>
    </message>
    <message>
        <source>every row in processing, the oldest first (selected)</source>
        <translation>所有 processing 行，最早的在前（已选中）</translation>
    </message>
    <message>
        <source>The database did not answer within %1 s (a lock held by another session, or a busy server).</source>
        <translation>数据库在 %1 秒内没有响应（另一个会话持有锁，或服务器繁忙）。</translation>
    </message>
    <message>
        <source>No answer for %1 s: the read waits for this console&apos;s connection, busy with another of its reads.</source>
        <translation>已 %1 秒无响应：本次读取在等待本控制台的连接，该连接正忙于控制台的另一项读取。</translation>
    </message>
    <message>
        <source>No answer from the database for %1 s: the console closed the connection and opens a new one.</source>
        <translation>数据库已 %1 秒无响应：控制台已关闭该连接并正在打开新连接。</translation>
    </message>
    <message>
        <source>Polling is paused.</source>
        <translation>轮询已暂停。</translation>
    </message>
    <message>
        <source>Reading again now.</source>
        <translation>正在重新读取。</translation>
    </message>
    <message>
        <source>Next read at %1 (in %2 s).</source>
        <translation>下次读取于 %1（%2 秒后）。</translation>
    </message>
    <message>
        <source>backing off: next read at %1 (in %2 s)</source>
        <translation>正在退避：下次读取于 %1（%2 秒后）</translation>
    </message>
    <message>
        <source>backing off: reading again now</source>
        <translation>正在退避：正在重新读取</translation>
    </message>
    <message>
        <source>stretched to every %1 s</source>
        <translation>已拉长为每 %1 秒一次</translation>
    </message>
    <message>
        <source>polling paused</source>
        <translation>轮询已暂停</translation>
    </message>
    <message>
        <source>reading again after failed reads (%1 in a row); every %2 s once reads answer</source>
        <translation>读取失败后正在重新读取（已连续 %1 次）；读取恢复响应后每 %2 秒一次</translation>
    </message>
    <message>
        <source>backing off after failed reads (%1 in a row): next read at %2 (in %3 s), not every %4 s</source>
        <translation>读取失败后正在退避（已连续 %1 次）：下次读取于 %2（%3 秒后），而不是每 %4 秒一次</translation>
    </message>
    <message>
        <source>every %1 s, stretched from %2 s: ticks over their budget</source>
        <translation>每 %1 秒一次，由 %2 秒拉长：轮询超出预算</translation>
    </message>
    <message>
        <source>every %1 s</source>
        <translation>每 %1 秒</translation>
    </message>
    <message>
        <source>No answer from the database for %1 s, not even to a cancel request at %2 s (a stopped server process or a cut network); a new connection at %3 s.</source>
        <translation>数据库已 %1 秒无响应，连第 %2 秒的取消请求也未响应（服务器进程已停止或网络已断开）；第 %3 秒将打开新连接。</translation>
    </message>
    <message>
        <source>No answer from the database for %1 s, and no cancel request could reach it (%2); a new connection at %3 s.</source>
        <translation>数据库已 %1 秒无响应，取消请求也无法送达（%2）；第 %3 秒将打开新连接。</translation>
    </message>
    <message>
        <source>No answer from the database for %1 s; the server ends a read at %2 s (statement timeout), else the console cancels it at %3 s and opens a new connection at %4 s.</source>
        <translation>数据库已 %1 秒无响应；服务器在第 %2 秒结束读取（语句超时），否则控制台将在第 %3 秒取消它，并在第 %4 秒打开新连接。</translation>
    </message>
    <message>
        <source>of %1 requests (retries not counted), %2</source>
        <translation>共 %1 次请求（不计重试），%2</translation>
    </message>
    <message>
        <source>%1: %2 with no effect, %3 with two or more, in the last %4 sampled</source>
        <translation>%1：%2 个无效果，%3 个有两个或更多，共抽查最近 %4 个</translation>
    </message>
    <message>
        <source>no probe has run (idemctl reconcile add)</source>
        <translation>尚无探针运行过（idemctl reconcile add）</translation>
    </message>
    <message>
        <source>It would open the keys the probes found without exactly one effect, but their rows look like any other succeeded key&apos;s: idemctl reconcile list names them (the first 50 of each run), and the incident snapshot keeps them.</source>
        <translation>本应打开探针发现效果不恰为一次的键，但它们的行与其他已成功键无异：idemctl reconcile list 列出这些键（每次运行前 50 个），事件快照也会保存它们。</translation>
    </message>
    <message>
        <source>last runs up to %1 ago</source>
        <translation>最近运行最早在 %1 前</translation>
    </message>
    <message numerus="yes">
        <source>%n operations</source>
        <translation>
            <numerusform>%n 个操作</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n probes</source>
        <translation>
            <numerusform>%n 个探针</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n keys not checked (query failed)</source>
        <translation>
            <numerusform>%n 个键未检查（查询失败）</numerusform>
        </translation>
    </message>
    <message>
        <source>It would open the slowest runs, but the latency figures are per-minute histograms of run times that name no key: the latency chart shows them minute by minute.</source>
        <translation>本应打开最慢的几次运行，但延迟数据是每分钟的运行时长直方图，不记录任何键：延迟图表逐分钟展示这些数据。</translation>
    </message>
</context>
<context>
    <name>idem::console::DashboardRowsDialog</name>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Error class</source>
        <translation>错误类别</translation>
    </message>
    <message>
        <source>Updated (UTC)</source>
        <translation>更新时间（UTC）</translation>
    </message>
    <message>
        <source>Lease until (UTC)</source>
        <translation>租约到期（UTC）</translation>
    </message>
    <message>
        <source>Could not read the rows: %1</source>
        <translation>无法读取这些行：%1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1 rows match</source>
        <translation>%1 行匹配</translation>
    </message>
    <message>
        <source>about %1 rows match (planner estimate)</source>
        <translation>约 %1 行匹配（规划器估计）</translation>
    </message>
    <message>
        <source>%1.</source>
        <translation>%1。</translation>
    </message>
    <message>
        <source>%1; the first %2 are listed.</source>
        <translation>%1；列出前 %2 行。</translation>
    </message>
    <message>
        <source>%1; all are listed.</source>
        <translation>%1；已全部列出。</translation>
    </message>
</context>
<context>
    <name>idem::console::DashboardSettingsDialog</name>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Dashboard thresholds</source>
        <translation>仪表盘阈值</translation>
    </message>
    <message>
        <source>&lt;b&gt;Tile&lt;/b&gt;</source>
        <translation>&lt;b&gt;指标卡&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Amber from&lt;/b&gt;</source>
        <translation>&lt;b&gt;黄色阈值&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Red from&lt;/b&gt;</source>
        <translation>&lt;b&gt;红色阈值&lt;/b&gt;</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Long-unfinished after</source>
        <translation>长期未完成的判定时长</translation>
    </message>
    <message>
        <source>A tile turns amber, then red, at or above these values. Crossing into red raises one desktop notification.</source>
        <translation>指标卡的数值达到或超过这些值时先变黄、再变红。变红时发出一条桌面通知。</translation>
    </message>
</context>
<context>
    <name>idem::console::DashboardWidget</name>
    <message>
        <source>%1 UTC (%2 local)</source>
        <translation>%1 UTC（本地时间 %2）</translation>
    </message>
    <message>
        <source>As of %1 (snapshot).</source>
        <translation>截至 %1（快照）。</translation>
    </message>
    <message>
        <source>As of %1, the snapshot&apos;s server clock</source>
        <translation>截至 %1，快照的服务器时钟</translation>
    </message>
    <message>
        <source>No data</source>
        <translation>无数据</translation>
    </message>
    <message>
        <source>read from a standby</source>
        <translation>读取自备库</translation>
    </message>
    <message>
        <source>figures over the last %1 min, charts over the last %2 min</source>
        <translation>数字为最近 %1 分钟，图表为最近 %2 分钟</translation>
    </message>
    <message>
        <source>Snapshot: read-only, not live.</source>
        <translation>快照：只读，非实时。</translation>
    </message>
    <message>
        <source>No thresholds set.</source>
        <translation>未设置阈值。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Amber from %1, red from %2.</source>
        <translation>%1 起变黄，%2 起变红。</translation>
    </message>
    <message>
        <source>every %1 s</source>
        <translation>每 %1 秒</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>15 min</source>
        <translation>15 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>6 h</source>
        <translation>6 小时</translation>
    </message>
    <message>
        <source>24 h</source>
        <translation>24 小时</translation>
    </message>
    <message>
        <source>all tenants</source>
        <translation>所有租户</translation>
    </message>
    <message>
        <source>all operations</source>
        <translation>所有操作</translation>
    </message>
    <message>
        <source>Refresh now</source>
        <translation>立即刷新</translation>
    </message>
    <message>
        <source>Thresholds…</source>
        <translation>阈值…</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>时间窗口</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Idem console</source>
        <translation>Idem 控制台</translation>
    </message>
    <message>
        <source>As of %1 (server clock)</source>
        <translation>截至 %1（服务器时钟）</translation>
    </message>
    <message>
        <source>standby, nothing replayed yet</source>
        <translation>备库，尚未回放任何数据</translation>
    </message>
    <message>
        <source>primary</source>
        <translation>主库</translation>
    </message>
    <message>
        <source>No data yet</source>
        <translation>尚无数据</translation>
    </message>
    <message>
        <source>PAUSED</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>● Live</source>
        <translation>● 实时</translation>
    </message>
    <message>
        <source>No data: %1</source>
        <translation>无数据：%1</translation>
    </message>
    <message>
        <source>Stale: %1</source>
        <translation>数据过时：%1</translation>
    </message>
    <message>
        <source>Stale, the last read failed: %1</source>
        <translation>数据过时，上次读取失败：%1</translation>
    </message>
    <message>
        <source>Disconnected: %1</source>
        <translation>已断开连接：%1</translation>
    </message>
    <message>
        <source>Idem: %1</source>
        <translation>Idem：%1</translation>
    </message>
    <message>
        <source>Last good data at %1 (%2 s ago).</source>
        <translation>最后一次有效数据于 %1（%2 秒前）。</translation>
    </message>
    <message>
        <source>● Live from a standby %1 s behind its primary: figures and lease expiry are as of its replay point (amber above %2 s, red above %3 s)</source>
        <translation>● 实时，但来自落后主库 %1 秒的备库：数字与租约过期以其回放点为准（超过 %2 秒为琥珀色，超过 %3 秒为红色）</translation>
    </message>
    <message>
        <source> % of claims</source>
        <translation> %（占认领）</translation>
    </message>
    <message>
        <source>%1 since %2</source>
        <translation>%1，自 %2 起</translation>
    </message>
    <message>
        <source>Red now: %1</source>
        <translation>当前为红色：%1</translation>
    </message>
    <message>
        <source>%1 since %2 or earlier</source>
        <translation>%1，自 %2 或更早起</translation>
    </message>
    <message>
        <source>As of %1 (no live data since): red then: %2</source>
        <translation>截至 %1（此后无实时数据）：当时为红色：%2</translation>
    </message>
    <message>
        <source>Pause intake…</source>
        <translation>暂停接收…</translation>
    </message>
    <message>
        <source>Resume intake…</source>
        <translation>恢复接收…</translation>
    </message>
    <message>
        <source>Resume %1…</source>
        <translation>恢复 %1…</translation>
    </message>
    <message>
        <source>Intake of %1 is paused by: %2.</source>
        <translation>%1 的接收被以下暂停：%2。</translation>
    </message>
    <message>
        <source>Intake of some of %1 is paused by: %2.</source>
        <translation>%1 的部分接收被以下暂停：%2。</translation>
    </message>
    <message>
        <source>Pause intake of %1 (the filtered scope): claim() turns its keys away until resumed or for a length you choose.</source>
        <translation>暂停 %1（当前筛选的范围）的接收：claim() 将拒绝其键，直到恢复或到达所选时长。</translation>
    </message>
    <message>
        <source>Nothing of %1 is paused.</source>
        <translation>%1 没有任何暂停。</translation>
    </message>
    <message>
        <source>Lift a pause of %1: %2.</source>
        <translation>解除 %1 的暂停：%2。</translation>
    </message>
    <message>
        <source>intake paused</source>
        <translation>接收已暂停</translation>
    </message>
    <message>
        <source>The server said: %1</source>
        <translation>服务器的原话：%1</translation>
    </message>
    <message>
        <source>standby (figures and lease expiry as of its replay point, %1), replication lag %2 s</source>
        <translation>备库（数字与租约过期以其回放点 %1 为准），复制延迟 %2 秒</translation>
    </message>
    <message>
        <source>console load: %1 ms per tick, %2</source>
        <translation>控制台负载：每次轮询 %1 毫秒，%2</translation>
    </message>
    <message>
        <source>primary %1, timeline %2</source>
        <translation>主库 %1，时间线 %2</translation>
    </message>
    <message>
        <source>Pause intake: %1</source>
        <translation>暂停接收：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::EnvironmentBand</name>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>idem::console::EventMarks</name>
    <message numerus="yes">
        <source>… and %n more</source>
        <translation>
            <numerusform>……另有 %n 个</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>Marks at the top: events that explain a change (hover one for when, who and why): %1; a number: that many events close together.</source>
        <translation>顶部的标记：解释变化的事件（悬停可查看时间、操作人和原因）：%1；数字：相距很近的若干事件。</translation>
    </message>
    <message numerus="yes">
        <source>%n event(s)</source>
        <translation>
            <numerusform>%n 个事件</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::EventWatch</name>
    <message>
        <source>annotation</source>
        <translation>注释</translation>
    </message>
    <message>
        <source>deploy</source>
        <translation>部署</translation>
    </message>
    <message>
        <source>failover</source>
        <translation>故障切换</translation>
    </message>
    <message>
        <source>intake paused</source>
        <translation>接收已暂停</translation>
    </message>
    <message>
        <source>intake resumed</source>
        <translation>接收已恢复</translation>
    </message>
    <message>
        <source>requeued</source>
        <translation>已重新入队</translation>
    </message>
    <message>
        <source>lease released</source>
        <translation>租约已释放</translation>
    </message>
    <message>
        <source>marked failed</source>
        <translation>已标记为失败</translation>
    </message>
    <message>
        <source>retention changed</source>
        <translation>保留期已更改</translation>
    </message>
    <message>
        <source>purged</source>
        <translation>已清理</translation>
    </message>
</context>
<context>
    <name>idem::console::ExportDialog</name>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Replace the previous snapshot in this folder</source>
        <translation>替换此文件夹中之前的快照</translation>
    </message>
    <message>
        <source>Redact results and error messages (for bundles that leave the team)</source>
        <translation>隐去结果和错误消息（用于要交给团队以外的快照包）</translation>
    </message>
    <message>
        <source>Sign with my Ed25519 key</source>
        <translation>用我的 Ed25519 密钥签名</translation>
    </message>
    <message>
        <source>Create signing key</source>
        <translation>创建签名密钥</translation>
    </message>
    <message>
        <source>Also write report.pdf</source>
        <translation>同时生成 report.pdf</translation>
    </message>
    <message>
        <source>Export incident snapshot</source>
        <translation>导出事故快照</translation>
    </message>
    <message numerus="yes">
        <source>last %n minute(s)</source>
        <translation>
            <numerusform>最近 %n 分钟</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>last %n hour(s)</source>
        <translation>
            <numerusform>最近 %n 小时</numerusform>
        </translation>
    </message>
    <message>
        <source> rows per set</source>
        <translation> 行/每组</translation>
    </message>
    <message>
        <source>At most this many rows of each set (expired leases, longest running, failed, uncertain); the snapshot states the total and whether the bound was reached.</source>
        <translation>每组（过期租约、运行最久、失败、结果不确定）最多包含的行数；快照会注明总数以及是否达到上限。</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <source>Charts history:</source>
        <translation>图表历史：</translation>
    </message>
    <message>
        <source>Row bound:</source>
        <translation>行数上限：</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Folder for the snapshot</source>
        <translation>快照所在文件夹</translation>
    </message>
    <message>
        <source>The signing key cannot be used: %1</source>
        <translation>签名密钥无法使用：%1</translation>
    </message>
    <message>
        <source>Created a new Ed25519 signing key at %1, readable only by you (mode 0600). Public key SHA-256 %2. Give the public key (idemctl snapshot pubkey) to whoever checks your bundles.</source>
        <translation>已在 %1 创建新的 Ed25519 签名密钥，仅你本人可读（权限 0600）。公钥 SHA-256 %2。请把公钥（idemctl snapshot pubkey）交给校验你的快照包的人。</translation>
    </message>
    <message>
        <source>The signing key could not be created: %1</source>
        <translation>无法创建签名密钥：%1</translation>
    </message>
    <message>
        <source>Choose a folder name for the snapshot.</source>
        <translation>请为快照选择一个文件夹名称。</translation>
    </message>
    <message>
        <source>The folder %1 does not exist.</source>
        <translation>文件夹 %1 不存在。</translation>
    </message>
    <message>
        <source>You cannot write to %1; choose another folder.</source>
        <translation>你无法写入 %1；请选择其他文件夹。</translation>
    </message>
    <message>
        <source>%1 exists and is not a snapshot bundle; choose another name.</source>
        <translation>%1 已存在且不是快照包；请选择其他名称。</translation>
    </message>
    <message>
        <source>A snapshot already exists at %1. Tick &quot;Replace&quot; to overwrite it, or choose another name.</source>
        <translation>%1 处已有快照。勾选“替换”以覆盖它，或选择其他名称。</translation>
    </message>
    <message>
        <source>There is no signing key yet: create one, or untick &quot;Sign&quot;.</source>
        <translation>还没有签名密钥：请创建一个，或取消勾选“签名”。</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>Copy the signing key&apos;s full path</source>
        <translation>复制签名密钥的完整路径</translation>
    </message>
    <message>
        <source>No signing key yet at %1.
Create one to sign (it is used by idemctl too).</source>
        <translation>%1 处还没有签名密钥。
请创建一个用于签名（idemctl 也会使用它）。</translation>
    </message>
    <message>
        <source>Key %1,
public key SHA-256 %2…</source>
        <translation>密钥 %1，
公钥 SHA-256 %2…</translation>
    </message>
</context>
<context>
    <name>idem::console::Failure</name>
    <message>
        <source>The connection string is not valid: %1</source>
        <translation>连接字符串无效：%1</translation>
    </message>
    <message>
        <source>The server could not be reached: %1</source>
        <translation>无法连接到服务器：%1</translation>
    </message>
    <message>
        <source>Authentication failed: %1
Check the user name and the password (or ~/.pgpass, PGPASSWORD).</source>
        <translation>认证失败：%1
请检查用户名和密码（或 ~/.pgpass、PGPASSWORD）。</translation>
    </message>
    <message>
        <source>TLS failure: %1
Check the SSL mode and that the root certificate is the one that signed the server&apos;s certificate.</source>
        <translation>TLS 失败：%1
请检查 SSL 模式，并确认根证书正是签发服务器证书的那一个。</translation>
    </message>
    <message>
        <source>The connection timed out: %1</source>
        <translation>连接超时：%1</translation>
    </message>
    <message>
        <source>The schema name is not valid: %1</source>
        <translation>模式名称无效：%1</translation>
    </message>
    <message>
        <source>The connection was lost: %1</source>
        <translation>连接已丢失：%1</translation>
    </message>
    <message>
        <source>A query failed%1: %2</source>
        <translation>查询失败%1：%2</translation>
    </message>
    <message>
        <source>Migration refused, nothing was changed: %1</source>
        <translation>迁移被拒绝，未做任何更改：%1</translation>
    </message>
    <message>
        <source>Error%1: %2</source>
        <translation>错误%1：%2</translation>
    </message>
    <message>
        <source>%1 Reconnecting in %2 s.</source>
        <translation>%1 %2 秒后重新连接。</translation>
    </message>
    <message>
        <source>The server is read-only now: it is not the primary any more (a switchover or a failover). %1</source>
        <translation>服务器现在是只读的：它已不再是主库（发生了切换或故障转移）。%1</translation>
    </message>
    <message>
        <source>The server is read-only (a standby, or not the primary): this needs the primary. %1</source>
        <translation>服务器是只读的（备库，或不是主库）：此操作需要主库。%1</translation>
    </message>
    <message>
        <source>The database did not answer within %1 s, so the console cancelled the statement.</source>
        <translation>数据库在 %1 秒内没有响应，因此控制台取消了该语句。</translation>
    </message>
    <message>
        <source>The database did not answer in time: the statement reached its time limit (a lock held by another session, or a busy server).</source>
        <translation>数据库未能及时响应：该语句达到了时间上限（另一个会话持有锁，或服务器繁忙）。</translation>
    </message>
    <message>
        <source>The statement was cancelled on request (by an administrator, or by this console after it waited too long).</source>
        <translation>该语句已应请求被取消（由管理员取消，或由本控制台在等待过久后取消）。</translation>
    </message>
    <message>
        <source>The statement was cancelled before it finished (its time limit, a lock held by another session, or a cancel request).</source>
        <translation>该语句在完成前被取消（时间上限、另一个会话持有的锁，或一次取消请求）。</translation>
    </message>
    <message>
        <source>A row or table this needs is locked by another session, and the statement gave up waiting for it.</source>
        <translation>所需的行或表被另一个会话锁定，该语句已放弃等待。</translation>
    </message>
    <message>
        <source>The statement was caught in a deadlock with another session; the database cancelled it to break the deadlock.</source>
        <translation>该语句与另一个会话发生死锁；数据库取消了它以解除死锁。</translation>
    </message>
</context>
<context>
    <name>idem::console::FencingPanel</name>
    <message>
        <source>&lt;span style=&quot;color:%1&quot;&gt;━━&lt;/span&gt; leases taken over per minute &amp;nbsp; &lt;span style=&quot;color:%2&quot;&gt;━━&lt;/span&gt; late calls refused per minute</source>
        <translation>&lt;span style=&quot;color:%1&quot;&gt;━━&lt;/span&gt; 每分钟被接管的租约 &amp;nbsp; &lt;span style=&quot;color:%2&quot;&gt;━━&lt;/span&gt; 每分钟被拒绝的迟到调用</translation>
    </message>
    <message>
        <source>Every measured attempt finished within its lease.</source>
        <translation>所有已测量的尝试都在其租约内完成。</translation>
    </message>
    <message>
        <source>Run time against the lease:</source>
        <translation>运行时间与租约对比：</translation>
    </message>
    <message>
        <source>By worker (application name):</source>
        <translation>按工作进程（application_name）：</translation>
    </message>
</context>
<context>
    <name>idem::console::FencingWatch</name>
    <message>
        <source>Fencing, last %1 min: leases taken over %2, late calls refused %3</source>
        <translation>隔离（fencing），最近 %1 分钟：被接管的租约 %2，被拒绝的迟到调用 %3</translation>
    </message>
    <message>
        <source> (the fence held: each came from an attempt that had lost its key)</source>
        <translation>（隔离有效：每一个都来自已失去其键的尝试）</translation>
    </message>
    <message>
        <source>%1: no run time measured yet</source>
        <translation>%1：尚未测得运行时间</translation>
    </message>
    <message>
        <source>%1: p99 run time %2; no lease recorded</source>
        <translation>%1：p99 运行时间 %2；未记录租约</translation>
    </message>
    <message>
        <source>%1: p99 run time %2 exceeds the %3 lease: %4 % of attempts outlive their lease</source>
        <translation>%1：p99 运行时间 %2 超过 %3 的租约：%4 % 的尝试超出其租约</translation>
    </message>
    <message>
        <source>%1: p99 run time %2 exceeds the %3 lease</source>
        <translation>%1：p99 运行时间 %2 超过 %3 的租约</translation>
    </message>
    <message>
        <source>%1: p99 run time %2 is within the %3 lease: %4 % of attempts outlive it</source>
        <translation>%1：p99 运行时间 %2 在 %3 的租约之内：%4 % 的尝试超出租约</translation>
    </message>
    <message>
        <source>%1: p99 run time %2 is within the %3 lease</source>
        <translation>%1：p99 运行时间 %2 在 %3 的租约之内</translation>
    </message>
    <message>
        <source>%1 (%2): late calls refused %3, leases taken over %4</source>
        <translation>%1（%2）：被拒绝的迟到调用 %3，被接管的租约 %4</translation>
    </message>
    <message>
        <source>more workers: %1 (idemctl fencing)</source>
        <translation>更多工作进程：%1（idemctl fencing）</translation>
    </message>
</context>
<context>
    <name>idem::console::FieldComparison</name>
    <message>
        <source>%1 and %2 more</source>
        <translation>%1 等另外 %2 个</translation>
    </message>
    <message>
        <source>Fields: %1 fingerprinted; no conflicting request&apos;s fingerprints to compare with.</source>
        <translation>字段：已为 %1 个字段计算指纹；没有冲突请求的指纹可供比较。</translation>
    </message>
    <message>
        <source>Fields: the conflicting request&apos;s fields are fingerprinted, the key&apos;s request was not: nothing to compare.</source>
        <translation>字段：冲突请求的字段有指纹，而该键原请求没有：无从比较。</translation>
    </message>
    <message>
        <source>%1 differs</source>
        <translation>%1 不同</translation>
    </message>
    <message>
        <source>%1 differ</source>
        <translation>%1 不同</translation>
    </message>
    <message>
        <source>%1 only in the stored request</source>
        <translation>%1 仅在已存请求中</translation>
    </message>
    <message>
        <source>%1 only in the conflicting request</source>
        <translation>%1 仅在冲突请求中</translation>
    </message>
    <message>
        <source>%1 same</source>
        <translation>%1 相同</translation>
    </message>
    <message>
        <source>%1 field(s) not compared (past 64 fields or a name over 256 bytes)</source>
        <translation>%1 个字段未比较（超过 64 个字段，或名称超过 256 字节）</translation>
    </message>
    <message>
        <source>no field differs by its fingerprint (the field keys differ, or a field was ignored for the digest)</source>
        <translation>按指纹没有字段不同（字段密钥不同，或某字段在摘要中被忽略）</translation>
    </message>
    <message>
        <source>Fields: %1</source>
        <translation>字段：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::FleetModel</name>
    <message>
        <source> (standby)</source>
        <translation>（备库）</translation>
    </message>
    <message>
        <source> (primary)</source>
        <translation>（主库）</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Cannot connect: %1</source>
        <translation>无法连接：%1</translation>
    </message>
    <message>
        <source>Cannot connect.</source>
        <translation>无法连接。</translation>
    </message>
    <message>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>not answering: %1</source>
        <translation>无应答：%1</translation>
    </message>
    <message>
        <source>red: %1</source>
        <translation>红色：%1</translation>
    </message>
    <message>
        <source>amber: %1</source>
        <translation>琥珀色：%1</translation>
    </message>
    <message>
        <source>%1 expired leases</source>
        <translation>%1 个过期租约</translation>
    </message>
    <message>
        <source>intake paused (%1)</source>
        <translation>接收已暂停（%1）</translation>
    </message>
    <message>
        <source>standby %1 s behind</source>
        <translation>备库落后 %1 秒</translation>
    </message>
    <message>
        <source>node changed at %1</source>
        <translation>节点于 %1 变更</translation>
    </message>
    <message>
        <source>Healthy</source>
        <translation>健康</translation>
    </message>
    <message>
        <source>standby %1/%2</source>
        <translation>备库 %1/%2</translation>
    </message>
    <message>
        <source>primary %1/%2</source>
        <translation>主库 %1/%2</translation>
    </message>
    <message>
        <source>, replay %1 s behind</source>
        <translation>，回放落后 %1 秒</translation>
    </message>
    <message>
        <source>; changed at %1 (was %2)</source>
        <translation>；于 %1 变更（原为 %2）</translation>
    </message>
    <message>
        <source>no reads: not connected</source>
        <translation>不读取：未连接</translation>
    </message>
    <message>
        <source>no reads: nothing to read</source>
        <translation>不读取：没有可读的内容</translation>
    </message>
    <message>
        <source>tick %1 ms, %2</source>
        <translation>轮询 %1 毫秒，%2</translation>
    </message>
    <message>
        <source>%1 databases: %2 red, %3 amber, %4 green, %5 not known yet</source>
        <translation>%1 个数据库：%2 个红色，%3 个琥珀色，%4 个绿色，%5 个尚未知</translation>
    </message>
    <message>
        <source>Double-click to open %1 in a console window of its own.</source>
        <translation>双击可在单独的控制台窗口中打开 %1。</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>One connection on a worker thread of its own, read as one console&apos;s dashboard reads it: one statement per tick, %1, and the pauses every %2 s.</source>
        <translation>一个连接，在其自己的工作线程上，按单个控制台仪表盘的方式读取：每次轮询一条语句，%1；暂停列表每 %2 秒读取一次。</translation>
    </message>
    <message>
        <source>Database</source>
        <translation>数据库</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>环境</translation>
    </message>
    <message>
        <source>Health</source>
        <translation>健康状况</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>Console&apos;s cost</source>
        <translation>控制台开销</translation>
    </message>
</context>
<context>
    <name>idem::console::FleetWidget</name>
    <message>
        <source>Each database is read as one console&apos;s dashboard reads it: one connection, one statement per tick. Double-click a row to open that database in a window of its own.</source>
        <translation>每个数据库都按单个控制台仪表盘的方式读取：一个连接，每次轮询一条语句。双击一行可在单独的窗口中打开该数据库。</translation>
    </message>
    <message>
        <source>No connection profiles yet: save one in the connection dialog (Connection &gt; Connect…), then Fleet &gt; Reload profiles.</source>
        <translation>尚无连接配置：请在连接对话框（连接 &gt; 连接…）中保存一个，然后选择 数据库群 &gt; 重新载入配置。</translation>
    </message>
</context>
<context>
    <name>idem::console::FleetWindow</name>
    <message>
        <source>&amp;Fleet</source>
        <translation>数据库群(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Reload profiles</source>
        <translation>重新载入配置(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Close</source>
        <translation>关闭(&amp;C)</translation>
    </message>
    <message>
        <source>Fleet – Idem console</source>
        <translation>数据库群 – Idem 控制台</translation>
    </message>
</context>
<context>
    <name>idem::console::HorizonWatch</name>
    <message>
        <source>session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>prepared transaction</source>
        <translation>预备事务</translation>
    </message>
    <message>
        <source>replication slot</source>
        <translation>复制槽</translation>
    </message>
    <message>
        <source>replication slot (catalogues only)</source>
        <translation>复制槽（仅系统目录）</translation>
    </message>
    <message>
        <source>standby feedback</source>
        <translation>备库反馈</translation>
    </message>
    <message>
        <source> pid %1</source>
        <translation> pid %1</translation>
    </message>
    <message>
        <source>role %1</source>
        <translation>角色 %1</translation>
    </message>
    <message>
        <source>application %1</source>
        <translation>应用 %1</translation>
    </message>
    <message>
        <source>from %1</source>
        <translation>来自 %1</translation>
    </message>
    <message>
        <source>open %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>%1 xids</source>
        <translation>%1 个事务 ID</translation>
    </message>
    <message>
        <source>⚠ The transaction horizon is held past %1 by %2, and the Idem tables&apos; dead rows grew by %3 since %4: VACUUM cannot remove them until it ends (Storage page).</source>
        <translation>⚠ 事务视界被 %2 拖住已超过 %1，Idem 表的死行自 %4 起增加了 %3：在它结束之前 VACUUM 无法清除它们（见存储页）。</translation>
    </message>
</context>
<context>
    <name>idem::console::IntegrityNotice</name>
    <message numerus="yes">
        <source>⚠ %n counter flush(es) refused as implausible in the last 24 h; the last at %1 by role %2 (application %3, from %4): %5</source>
        <translation>
            <numerusform>⚠ 过去 24 小时内有 %n 次计数器刷新因不可信被拒绝；最近一次于 %1，由角色 %2 发出（应用 %3，来自 %4）：%5</numerusform>
        </translation>
    </message>
    <message>
        <source>a local socket</source>
        <translation>本地套接字</translation>
    </message>
    <message>
        <source>⚠ The shared exact refresh is held by pid %1 (role %2, application %3) since %4: this console counts the exact figures itself</source>
        <translation>⚠ 共享精确刷新被 pid %1（角色 %2，应用 %3）自 %4 起占用：本控制台自行计算精确数值</translation>
    </message>
    <message>
        <source>(not visible to this role)</source>
        <translation>（此角色不可见）</translation>
    </message>
</context>
<context>
    <name>idem::console::JobItemsModel</name>
    <message>
        <source>moved on</source>
        <translation>已变化</translation>
    </message>
    <message>
        <source>busy (locked)</source>
        <translation>忙（被锁定）</translation>
    </message>
    <message>
        <source>gone</source>
        <translation>已不存在</translation>
    </message>
    <message>
        <source>not applicable</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Why refused</source>
        <translation>拒绝原因</translation>
    </message>
    <message>
        <source>At the job&apos;s moment</source>
        <translation>作业时刻的状态</translation>
    </message>
    <message>
        <source>As the job found it</source>
        <translation>作业发现时的状态</translation>
    </message>
    <message>
        <source>Tries</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Refused at</source>
        <translation>拒绝时间</translation>
    </message>
</context>
<context>
    <name>idem::console::JobsModel</name>
    <message>
        <source>active</source>
        <translation>活动</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>awaiting approval</source>
        <translation>等待审批</translation>
    </message>
    <message>
        <source>requeue</source>
        <translation>重新入队</translation>
    </message>
    <message>
        <source>release lease</source>
        <translation>释放租约</translation>
    </message>
    <message>
        <source>mark failed</source>
        <translation>标记为失败</translation>
    </message>
    <message>
        <source>%1 changed, %2 refused, %3 skipped of %4 (%5 to do)</source>
        <translation>共 %4 个：已修改 %1，拒绝 %2，跳过 %3（待处理 %5）</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Filter</source>
        <translation>筛选</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>速率</translation>
    </message>
    <message>
        <source>ETA</source>
        <translation>预计剩余</translation>
    </message>
    <message>
        <source>Runner</source>
        <translation>运行者</translation>
    </message>
    <message>
        <source>Started by</source>
        <translation>启动者</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>refused: %1 moved on, %2 busy, %3 gone; skipped: %4 not applicable, %5 cancelled</source>
        <translation>拒绝：%1 已变化，%2 忙，%3 已不存在；跳过：%4 不适用，%5 已取消</translation>
    </message>
    <message>
        <source>active, not running</source>
        <translation>活动，未在运行</translation>
    </message>
    <message>
        <source>%1 rows/s</source>
        <translation>%1 行/秒</translation>
    </message>
    <message>
        <source>%1 (pid %2)</source>
        <translation>%1（pid %2）</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>尚无</translation>
    </message>
    <message>
        <source>gone (last: %1)</source>
        <translation>已离开（最后一个：%1）</translation>
    </message>
    <message>
        <source>%1 (%2), %3</source>
        <translation>%1（%2），%3</translation>
    </message>
    <message>
        <source>requeue (attempts +%1)</source>
        <translation>重新入队（尝试次数 +%1）</translation>
    </message>
    <message>
        <source>requeue and re-execute (attempts +%1)</source>
        <translation>重新排队并重新执行（尝试次数 +%1）</translation>
    </message>
    <message>
        <source>requeue and re-execute</source>
        <translation>重新排队并重新执行</translation>
    </message>
    <message>
        <source>Re-execution</source>
        <translation>重新执行</translation>
    </message>
</context>
<context>
    <name>idem::console::JobsWidget</name>
    <message numerus="yes">
        <source>%n refused row(s) written to %1</source>
        <translation>
            <numerusform>已将 %n 个被拒绝的行写入 %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Export failed: %1</source>
        <translation>导出失败：%1</translation>
    </message>
    <message>
        <source>Export refused rows</source>
        <translation>导出被拒绝的行</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Job %1: this console stopped running it (%2).</source>
        <translation>作业 %1：本控制台已停止运行它（%2）。</translation>
    </message>
    <message>
        <source>Job %1 could not run from this console: %2</source>
        <translation>作业 %1 无法从本控制台运行：%2</translation>
    </message>
    <message>
        <source>Could not read the jobs: %1</source>
        <translation>无法读取作业：%1</translation>
    </message>
    <message>
        <source>Not connected: the list is as last read.</source>
        <translation>未连接：列表为上次读取的内容。</translation>
    </message>
    <message numerus="yes">
        <source>%n job(s), read every %1 s.</source>
        <translation>
            <numerusform>%n 个作业，每 %1 秒读取一次。</numerusform>
        </translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>The schema is newer than this console: read-only.</source>
        <translation>模式比本控制台新：只读。</translation>
    </message>
    <message>
        <source>Select a job to see its progress and refused rows.</source>
        <translation>选择一个作业以查看其进度和被拒绝的行。</translation>
    </message>
    <message>
        <source>Refused rows</source>
        <translation>被拒绝的行</translation>
    </message>
    <message>
        <source>Job %1: %2, %3 over %4</source>
        <translation>作业 %1：%2，对 %4 执行%3</translation>
    </message>
    <message>
        <source>As of %1, cap %2; started by %3 (%4, %5): %6</source>
        <translation>时刻 %1，上限 %2；启动者 %3（%4，%5）：%6</translation>
    </message>
    <message>
        <source>refused: %1 moved on, %2 busy, %3 gone; skipped: %4 not applicable, %5 cancelled</source>
        <translation>拒绝：%1 已变化，%2 忙，%3 已不存在；跳过：%4 不适用，%5 已取消</translation>
    </message>
    <message>
        <source>Ended %1.</source>
        <translation>结束于 %1。</translation>
    </message>
    <message>
        <source>Cancelled by %1: %2</source>
        <translation>由 %1 取消：%2</translation>
    </message>
    <message>
        <source>Running: %1 (%2, pid %3)%4</source>
        <translation>运行中：%1（%2，pid %3）%4</translation>
    </message>
    <message>
        <source>, %1 rows/s, about %2 left</source>
        <translation>，%1 行/秒，约剩 %2</translation>
    </message>
    <message>
        <source>No runner holds it: it waits, with every batch done so far kept. Resume runs it from this console; idemctl job resume %1 or CALL idem_job_run(%1) anywhere else.</source>
        <translation>没有运行者持有它：它在等待，已完成的批次全部保留。“在此继续”从本控制台运行它；在其他地方可用 idemctl job resume %1 或 CALL idem_job_run(%1)。</translation>
    </message>
    <message>
        <source>State %1: nothing to run until it becomes active.</source>
        <translation>状态 %1：在变为活动之前没有可运行的内容。</translation>
    </message>
    <message>
        <source>%1 of %2 done</source>
        <translation>已完成 %1 / %2</translation>
    </message>
    <message>
        <source>Stops it at the next batch; the rows not done are recorded as skipped.</source>
        <translation>在下一批次处停止；未完成的行记为跳过。</translation>
    </message>
    <message>
        <source>A runner holds it already.</source>
        <translation>已有运行者持有它。</translation>
    </message>
    <message>
        <source>Runs it from this console on a connection of its own.</source>
        <translation>在本控制台用单独的连接运行它。</translation>
    </message>
    <message>
        <source>Refused rows: the first %1 of %2 (Export writes them all)</source>
        <translation>被拒绝的行：%2 个中的前 %1 个（导出会写出全部）</translation>
    </message>
    <message>
        <source>Refused rows: %1</source>
        <translation>被拒绝的行：%1</translation>
    </message>
    <message>
        <source>Cancel job %1</source>
        <translation>取消作业 %1</translation>
    </message>
    <message>
        <source>Job %1 stops at its next batch. What it changed stays changed; the rows not done are recorded as skipped (cancelled). The cancel is audited with this reason.</source>
        <translation>作业 %1 将在下一批次处停止。已修改的内容保持不变；未完成的行记为跳过（已取消）。取消操作会连同此原因记入审计。</translation>
    </message>
    <message>
        <source>Why (kept in the audit trail)</source>
        <translation>原因（记入审计记录）</translation>
    </message>
    <message>
        <source>Cancel job</source>
        <translation>取消作业</translation>
    </message>
    <message>
        <source>Keep running</source>
        <translation>继续运行</translation>
    </message>
    <message>
        <source>Cancelling job %1…</source>
        <translation>正在取消作业 %1…</translation>
    </message>
    <message>
        <source>Job %1 cancelled: %2 row(s) not done, recorded as skipped.</source>
        <translation>作业 %1 已取消：%2 行未完成，记为跳过。</translation>
    </message>
    <message>
        <source>Job %1 was not cancelled: %2</source>
        <translation>作业 %1 未被取消：%2</translation>
    </message>
    <message>
        <source>Job %1: running from this console. Closing the console stops running it here; the job stays resumable.</source>
        <translation>作业 %1：正在从本控制台运行。关闭控制台会停止在此运行；作业仍可继续。</translation>
    </message>
    <message>
        <source>Writing job %1&apos;s refused rows…</source>
        <translation>正在写出作业 %1 被拒绝的行…</translation>
    </message>
    <message>
        <source>Recovery jobs apply one action to every task a filter matched, in the database, in batches. Start one from the Tasks page (Apply to all matching…) or with idemctl job start; jobs started anywhere show here.</source>
        <translation>恢复作业在数据库中分批对筛选条件匹配的每个任务执行一个操作。可从任务页（应用到所有匹配项…）或用 idemctl job start 启动；任何地方启动的作业都显示在这里。</translation>
    </message>
    <message>
        <source>Cancel job…</source>
        <translation>取消作业…</translation>
    </message>
    <message>
        <source>Resume here</source>
        <translation>在此继续</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>Job %1 was approved by %2: this console runs it now.</source>
        <translation>作业 %1 已由 %2 批准：本控制台现在运行它。</translation>
    </message>
    <message>
        <source>Job %1 was approved by %2 and is %3.</source>
        <translation>作业 %1 已由 %2 批准，现为%3。</translation>
    </message>
    <message>
        <source>Job %1 was approved by %2: Resume runs it from this console (or idemctl job resume %1).</source>
        <translation>作业 %1 已由 %2 批准：“在此继续”从本控制台运行它（或用 idemctl job resume %1）。</translation>
    </message>
    <message>
        <source>Waiting for approval by a holder of approve (another login with the approve right: the Approvals dialog, or idemctl approvals approve %1); nothing changes until then. %2</source>
        <translation>正在等待拥有 approve 权限者（另一个拥有审批权限的登录名：审批对话框，或 idemctl approvals approve %1）审批；在此之前不做任何修改。%2</translation>
    </message>
    <message>
        <source>This console runs it as soon as it is approved.</source>
        <translation>一经批准，本控制台即运行它。</translation>
    </message>
    <message>
        <source>Once approved, Resume runs it from this console.</source>
        <translation>获批后，“在此继续”从本控制台运行它。</translation>
    </message>
    <message>
        <source>Resume: %1</source>
        <translation>继续：%1</translation>
    </message>
    <message>
        <source>Cancel: %1</source>
        <translation>取消：%1</translation>
    </message>
    <message>
        <source>Re-executed: %1</source>
        <translation>重新执行：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::LatencyChart</name>
    <message>
        <source>run p50</source>
        <translation>运行 p50</translation>
    </message>
    <message>
        <source>run p95</source>
        <translation>运行 p95</translation>
    </message>
    <message>
        <source>run p99</source>
        <translation>运行 p99</translation>
    </message>
    <message>
        <source>to success p50</source>
        <translation>至成功 p50</translation>
    </message>
    <message>
        <source>to success p95</source>
        <translation>至成功 p95</translation>
    </message>
    <message>
        <source>to success p99</source>
        <translation>至成功 p99</translation>
    </message>
    <message>
        <source>Latency per minute, all operations</source>
        <translation>每分钟延迟，所有操作</translation>
    </message>
    <message>
        <source>Latency per minute, %1</source>
        <translation>每分钟延迟，%1</translation>
    </message>
    <message>
        <source>The latency figures could not be read: %1</source>
        <translation>无法读取延迟数据：%1</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>last point %1–%2: the last folded minute</source>
        <translation>最后一点 %1–%2：最近一个已汇总的分钟</translation>
    </message>
    <message>
        <source>The last read failed: %1</source>
        <translation>上次读取失败：%1</translation>
    </message>
    <message>
        <source>p50, p95 and p99 of the run time of each attempt (claim to complete or fail) and of the time to success of each key (first claim to complete, across retries), per minute, by the server&apos;s clock; log scale. Only folded minutes are drawn: the current minute is still counting, and a minute is folded once it has been closed for a minute, so the lines end a minute or two before now.</source>
        <translation>每次尝试的运行时长（从认领到完成或失败）与每个键的成功耗时（从首次认领到完成，跨越重试）的 p50、p95 和 p99，按分钟统计，以服务器时钟为准；对数刻度。只绘制已汇总的分钟：当前分钟仍在计数，而一分钟结束满一分钟后才会被汇总，因此曲线比当前时间早一到两分钟结束。</translation>
    </message>
    <message>
        <source>run time</source>
        <translation>运行时长</translation>
    </message>
    <message>
        <source>time to success</source>
        <translation>成功耗时</translation>
    </message>
    <message>
        <source>This snapshot carries no latency figures (taken before schema version 17, or by an older Idem).</source>
        <translation>此快照不含延迟数据（取自模式版本 17 之前，或由较旧的 Idem 生成）。</translation>
    </message>
    <message>
        <source>intake paused</source>
        <translation>接收已暂停</translation>
    </message>
    <message>
        <source>An amber band: intake of this scope was paused (claims turned away).</source>
        <translation>琥珀色区带：此范围的接收已暂停（认领被拒）。</translation>
    </message>
</context>
<context>
    <name>idem::console::LatencyWatch</name>
    <message>
        <source>not read yet</source>
        <translation>尚未读取</translation>
    </message>
    <message>
        <source>could not be read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>no runs in the %1 to %2</source>
        <translation>%1（截至 %2）没有运行</translation>
    </message>
    <message>
        <source>%1, %2 to %3</source>
        <translation>%1，%2（截至 %3）</translation>
    </message>
    <message>
        <source>The last read failed: %1</source>
        <translation>上次读取失败：%1</translation>
    </message>
    <message>
        <source>Slowest operations (p95 run time):</source>
        <translation>最慢的操作（p95 运行时长）：</translation>
    </message>
    <message numerus="yes">
        <source>%1: %2 (%Ln runs)</source>
        <translation>
            <numerusform>%1：%2（%Ln 次运行）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>… and %n more</source>
        <translation>
            <numerusform>……另有 %n 个</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::MainWindow</name>
    <message>
        <source>Dashboard</source>
        <translation>仪表盘</translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Audit</source>
        <translation>审计</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Connection</source>
        <translation>连接(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Connect…</source>
        <translation>连接(&amp;C)…</translation>
    </message>
    <message>
        <source>&amp;Refresh</source>
        <translation>刷新(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Disconnect</source>
        <translation>断开连接(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>About Idem console</source>
        <translation>关于 Idem 控制台</translation>
    </message>
    <message>
        <source>Idem console %1
Safe repeated task execution on PostgreSQL.</source>
        <translation>Idem 控制台 %1
在 PostgreSQL 上安全地重复执行任务。</translation>
    </message>
    <message>
        <source>&amp;About Idem console</source>
        <translation>关于 Idem 控制台(&amp;A)</translation>
    </message>
    <message>
        <source>Idem console</source>
        <translation>Idem 控制台</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Dashboard</source>
        <translation>仪表盘(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Tasks</source>
        <translation>任务(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Audit</source>
        <translation>审计(&amp;A)</translation>
    </message>
    <message>
        <source>C&amp;onnection</source>
        <translation>连接(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Next page</source>
        <translation>下一页(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Previous page</source>
        <translation>上一页(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Find tasks…</source>
        <translation>查找任务(&amp;F)…</translation>
    </message>
    <message>
        <source>T&amp;heme</source>
        <translation>主题(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;System</source>
        <translation>跟随系统(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>浅色(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>深色(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Export snapshot…</source>
        <translation>导出快照(&amp;E)…</translation>
    </message>
    <message>
        <source>Open snapshot</source>
        <translation>打开快照</translation>
    </message>
    <message>
        <source>&amp;Open snapshot…</source>
        <translation>打开快照(&amp;O)…</translation>
    </message>
    <message>
        <source>Storage</source>
        <translation>存储</translation>
    </message>
    <message>
        <source>&amp;Storage</source>
        <translation>存储(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Trusted signing keys…</source>
        <translation>可信签名密钥(&amp;T)…</translation>
    </message>
    <message>
        <source>Jobs</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>&amp;Jobs</source>
        <translation>作业(&amp;J)</translation>
    </message>
    <message>
        <source>%1@%2:%3/%4</source>
        <translation>%1@%2:%3/%4</translation>
    </message>
    <message>
        <source>%1 – Idem console</source>
        <translation>%1 – Idem 控制台</translation>
    </message>
    <message>
        <source>&amp;Fleet</source>
        <translation>数据库群(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Approvals…</source>
        <translation>审批(&amp;A)…</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>Recovery jobs waiting for a second person&apos;s approval</source>
        <translation>等待第二人审批的恢复作业</translation>
    </message>
    <message>
        <source>Copy &amp;link</source>
        <translation>复制链接(&amp;L)</translation>
    </message>
    <message>
        <source>No link copied: this connection is not one of your saved profiles. A link names a profile, never a connection string or a password: save this connection as a profile in the connection dialog, then copy the link again.</source>
        <translation>未复制链接：此连接不是已保存的连接配置。链接只给出配置名称，从不包含连接字符串或密码：请先在连接对话框中将此连接保存为配置，然后再复制链接。</translation>
    </message>
    <message>
        <source>No link copied: %1</source>
        <translation>未复制链接：%1</translation>
    </message>
    <message>
        <source>Link copied: %1</source>
        <translation>已复制链接：%1</translation>
    </message>
    <message>
        <source>Console link</source>
        <translation>控制台链接</translation>
    </message>
    <message>
        <source>Connection profiles…</source>
        <translation>连接配置…</translation>
    </message>
    <message>
        <source>This link cannot be opened: %1 Nothing was changed.</source>
        <translation>无法打开此链接：%1 未做任何更改。</translation>
    </message>
    <message>
        <source>This console has no saved profile named “%1”. Make one for that database in the connection dialog (the link names the profile, never its connection), then open the link again.</source>
        <translation>本控制台没有名为“%1”的已保存配置。请在连接对话框中为该数据库创建一个（链接只给出配置名称，从不包含其连接），然后再次打开链接。</translation>
    </message>
    <message>
        <source>what the link shows</source>
        <translation>链接所示内容</translation>
    </message>
</context>
<context>
    <name>idem::console::PageStatusLine</name>
    <message>
        <source>Not connected</source>
        <translation>未连接</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Connected</source>
        <translation>已连接</translation>
    </message>
    <message>
        <source>the connection failed</source>
        <translation>连接失败</translation>
    </message>
    <message>
        <source>Disconnected: %1; reconnecting by itself</source>
        <translation>已断开：%1；正在自动重连</translation>
    </message>
    <message>
        <source>Disconnected: %1</source>
        <translation>已断开连接：%1</translation>
    </message>
    <message>
        <source>as of %1 (%2)</source>
        <translation>截至 %1（%2）</translation>
    </message>
    <message>
        <source>showing what was read as of %1, %2 (stale)</source>
        <translation>显示截至 %1 读取的内容，%2（已过时）</translation>
    </message>
    <message>
        <source>reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <source>the recovery actions&apos; connection is lost, reconnecting by itself</source>
        <translation>恢复操作所用的连接已断开，正在自动重连</translation>
    </message>
    <message>
        <source>%1 ago</source>
        <translation>%1前</translation>
    </message>
</context>
<context>
    <name>idem::console::Patroni</name>
    <message>
        <source>member %1: %2</source>
        <translation>成员 %1：%2</translation>
    </message>
    <message>
        <source>member %1 (%2): %3</source>
        <translation>成员 %1（%2）：%3</translation>
    </message>
    <message>
        <source>the answer is larger than %1 kB: not Patroni&apos;s cluster list</source>
        <translation>应答大于 %1 kB：不是 Patroni 的集群列表</translation>
    </message>
    <message>
        <source>the answer is empty, not JSON</source>
        <translation>应答为空，不是 JSON</translation>
    </message>
    <message>
        <source>the answer is not JSON (%1 at byte %2)</source>
        <translation>应答不是 JSON（第 %2 字节处：%1）</translation>
    </message>
    <message>
        <source>the answer is JSON but not an object with &quot;members&quot;: not Patroni&apos;s cluster list</source>
        <translation>应答是 JSON，但不是带 &quot;members&quot; 的对象：不是 Patroni 的集群列表</translation>
    </message>
    <message>
        <source>the answer has no &quot;members&quot; list: not Patroni&apos;s GET /cluster</source>
        <translation>应答没有 &quot;members&quot; 列表：不是 Patroni 的 GET /cluster</translation>
    </message>
    <message>
        <source>the answer lists %1 members, more than %2: not taken</source>
        <translation>应答列出 %1 个成员，超过 %2 个：不予采用</translation>
    </message>
    <message>
        <source>not an object</source>
        <translation>不是对象</translation>
    </message>
    <message>
        <source>no name</source>
        <translation>没有名称</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not text</source>
        <translation>&quot;%1&quot; 不是文本</translation>
    </message>
    <message>
        <source>&quot;port&quot; is not a port number</source>
        <translation>&quot;port&quot; 不是端口号</translation>
    </message>
    <message>
        <source>&quot;timeline&quot; is not a timeline number</source>
        <translation>&quot;timeline&quot; 不是时间线编号</translation>
    </message>
    <message>
        <source>&quot;lag&quot; is neither a byte count nor &quot;unknown&quot;</source>
        <translation>&quot;lag&quot; 既不是字节数也不是 &quot;unknown&quot;</translation>
    </message>
    <message>
        <source>%1 is not a URL (http://host:8008)</source>
        <translation>%1 不是 URL（http://host:8008）</translation>
    </message>
    <message>
        <source>%1: Patroni&apos;s REST API is http or https, not %2</source>
        <translation>%1：Patroni 的 REST API 是 http 或 https，不是 %2</translation>
    </message>
    <message>
        <source>%1 names no host</source>
        <translation>%1 没有指明主机</translation>
    </message>
    <message>
        <source>a Patroni URL must not carry a password (GET /cluster needs none, and profiles keep none)</source>
        <translation>Patroni URL 不得包含密码（GET /cluster 不需要密码，配置文件也不保存密码）</translation>
    </message>
    <message>
        <source>no URL given</source>
        <translation>未给出 URL</translation>
    </message>
    <message>
        <source>no answer within %1 s</source>
        <translation>%1 秒内没有应答</translation>
    </message>
    <message>
        <source>answered HTTP %1 %2</source>
        <translation>应答为 HTTP %1 %2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Patroni says %1 is the leader; the server says it is a standby (in recovery)</source>
        <translation>Patroni 说 %1 是领导者；服务器说它是备库（处于恢复中）</translation>
    </message>
    <message>
        <source>Patroni says %1 is a standby cluster&apos;s leader; the server says it is a primary (not in recovery)</source>
        <translation>Patroni 说 %1 是备用集群的领导者；服务器说它是主库（不在恢复中）</translation>
    </message>
    <message>
        <source>Patroni says %1 is a %2; the server says it is a primary (not in recovery)</source>
        <translation>Patroni 说 %1 是%2；服务器说它是主库（不在恢复中）</translation>
    </message>
    <message>
        <source>Patroni&apos;s leader is %1, not this server, which is a primary too: two primaries, or Patroni&apos;s view is not the cluster&apos;s</source>
        <translation>Patroni 的领导者是 %1，而不是本服务器，但本服务器也是主库：出现了两个主库，或者 Patroni 的视图与集群实际不符</translation>
    </message>
    <message>
        <source>Patroni says timeline %1; the server is on timeline %2</source>
        <translation>Patroni 说时间线为 %1；服务器处于时间线 %2</translation>
    </message>
    <message>
        <source>Patroni lists %1 as a %2 streaming from this server; the server has no such standby</source>
        <translation>Patroni 列出 %1 为从本服务器流复制的%2；服务器上没有这样的备库</translation>
    </message>
    <message>
        <source>Patroni says %1 is a synchronous standby; the server streams to it as %2</source>
        <translation>Patroni 说 %1 是同步备库；服务器以 %2 方式向它流复制</translation>
    </message>
</context>
<context>
    <name>idem::console::PatroniModel</name>
    <message>
        <source>leader (primary)</source>
        <translation>领导者（主库）</translation>
    </message>
    <message>
        <source>synchronous standby</source>
        <translation>同步备库</translation>
    </message>
    <message>
        <source>replica (asynchronous)</source>
        <translation>副本（异步）</translation>
    </message>
    <message>
        <source>standby leader</source>
        <translation>备用集群领导者</translation>
    </message>
    <message>
        <source>unknown (no WAL position reported)</source>
        <translation>未知（未报告 WAL 位置）</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>%1 MB (%2 bytes)</source>
        <translation>%1 MB（%2 字节）</translation>
    </message>
    <message>
        <source>this console (actions and pages)</source>
        <translation>本控制台（操作和页面）</translation>
    </message>
    <message>
        <source>this console (actions)</source>
        <translation>本控制台（操作）</translation>
    </message>
    <message>
        <source>this console (pages)</source>
        <translation>本控制台（页面）</translation>
    </message>
    <message>
        <source>%1 (restart pending)</source>
        <translation>%1（待重启）</translation>
    </message>
    <message>
        <source>Member</source>
        <translation>成员</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Lag</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>Console on it</source>
        <translation>控制台所在</translation>
    </message>
</context>
<context>
    <name>idem::console::PauseBanner</name>
    <message>
        <source>Reason: %1 · %2</source>
        <translation>原因：%1 · %2</translation>
    </message>
    <message numerus="yes">
        <source>and %n more pause(s)</source>
        <translation>
            <numerusform>另有 %n 个暂停</numerusform>
        </translation>
    </message>
    <message>
        <source>All pauses…</source>
        <translation>全部暂停…</translation>
    </message>
    <message>
        <source>Details…</source>
        <translation>详情…</translation>
    </message>
    <message>
        <source>expired at %1 (no longer in force; listed until resumed or set again)</source>
        <translation>已于 %1 过期（不再生效；在恢复或重新设置前仍会列出）</translation>
    </message>
    <message>
        <source>%1 — %2; paused by %3 since %4; %5; reason: %6 (audit entry #%7)</source>
        <translation>%1 — %2；由 %3 自 %4 起暂停；%5；原因：%6（审计条目 #%7）</translation>
    </message>
    <message>
        <source>Pauses of intake – Idem console</source>
        <translation>接收暂停 – Idem 控制台</translation>
    </message>
    <message>
        <source>Every pause, in force first; idemctl pauses lists the same.</source>
        <translation>所有暂停，生效中的在前；idemctl pauses 列出相同内容。</translation>
    </message>
    <message>
        <source>claims turned away in the last %1 min: %2</source>
        <translation>最近 %1 分钟内被拒绝的认领：%2</translation>
    </message>
    <message>
        <source>Intake paused: %1, %2, by %3.</source>
        <translation>接收已暂停：%1，%2，操作者 %3。</translation>
    </message>
    <message>
        <source>matches no traffic yet (nothing of this scope counted in the last %1 min)</source>
        <translation>尚无匹配流量（最近 %1 分钟内此范围没有任何计数）</translation>
    </message>
</context>
<context>
    <name>idem::console::PauseDialog</name>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>The schema is newer than this console, or its migrations do not match: look, change nothing.</source>
        <translation>模式比此控制台新，或其迁移不匹配：只能查看，不做任何更改。</translation>
    </message>
    <message>
        <source>Pause intake – Idem console</source>
        <translation>暂停接收 – Idem 控制台</translation>
    </message>
    <message>
        <source>Resume intake – Idem console</source>
        <translation>恢复接收 – Idem 控制台</translation>
    </message>
    <message>
        <source>While a pause is in force, claim() neither acquires nor takes over a key of its scope: workers get the decision &apos;paused&apos; and ask again later, no attempt is counted. Replays of succeeded keys and digest conflicts still answer. &apos;*&apos; means all.</source>
        <translation>暂停生效期间，claim() 不会获取或接管其范围内的键：工作进程得到决定 &apos;paused&apos; 并稍后再试，不计入尝试次数。已成功键的重放和摘要冲突照常应答。&apos;*&apos; 表示全部。</translation>
    </message>
    <message>
        <source>15 min</source>
        <translation>15 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>4 h</source>
        <translation>4 小时</translation>
    </message>
    <message>
        <source>24 h</source>
        <translation>24 小时</translation>
    </message>
    <message>
        <source>Custom (minutes)</source>
        <translation>自定义（分钟）</translation>
    </message>
    <message>
        <source>Until resumed</source>
        <translation>直到恢复</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Tenant:</source>
        <translation>租户：</translation>
    </message>
    <message>
        <source>Operation:</source>
        <translation>操作：</translation>
    </message>
    <message>
        <source>Length:</source>
        <translation>时长：</translation>
    </message>
    <message>
        <source>until resumed</source>
        <translation>直到恢复</translation>
    </message>
    <message>
        <source>Lift the pause of %1. Claims of its keys acquire again from the moment this commits, unless another pause still covers them.</source>
        <translation>解除 %1 的暂停。从提交之时起，其键的认领将重新获取，除非仍有其他暂停覆盖它们。</translation>
    </message>
    <message>
        <source>Paused by %1 since %2, %3.</source>
        <translation>由 %1 自 %2 起暂停，%3。</translation>
    </message>
    <message>
        <source>Reason: %1</source>
        <translation>原因：%1</translation>
    </message>
    <message>
        <source>Why (ticket, incident, what you checked)…</source>
        <translation>原因（工单、事故、你检查了什么）…</translation>
    </message>
    <message>
        <source>A reason is required; it is kept in the audit trail with your role, user and host.</source>
        <translation>必须填写原因；它会与你的角色、用户和主机一起保存在审计记录中。</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Reason:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>%1 must be &apos;*&apos; or 1 to 64 visible ASCII characters without &apos;:&apos;.</source>
        <translation>%1 必须是 &apos;*&apos;，或 1 到 64 个不含 &apos;:&apos; 的可见 ASCII 字符。</translation>
    </message>
    <message>
        <source>The tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>The operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Pause of %1 changed: %2.</source>
        <translation>%1 的暂停已更改：%2。</translation>
    </message>
    <message>
        <source>Paused %1 %2.</source>
        <translation>已暂停 %1，%2。</translation>
    </message>
    <message>
        <source>Resumed %1.</source>
        <translation>已恢复 %1。</translation>
    </message>
    <message>
        <source>Still paused by: %1.</source>
        <translation>仍被以下暂停：%1。</translation>
    </message>
    <message>
        <source>Audit entry #%1.</source>
        <translation>审计条目 #%1。</translation>
    </message>
    <message>
        <source>Not paused: %1</source>
        <translation>未暂停：%1</translation>
    </message>
    <message>
        <source>Not resumed: %1</source>
        <translation>未恢复：%1</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Pause intake of %1…</source>
        <translation>暂停 %1 的接收…</translation>
    </message>
    <message>
        <source>Resume %1…</source>
        <translation>恢复 %1…</translation>
    </message>
    <message>
        <source>Yes, stop all intake: every tenant and every operation</source>
        <translation>是的，停止全部接收：所有租户和所有操作</translation>
    </message>
    <message>
        <source>Scope *:* pauses all intake, of every tenant and operation: tick the box above to confirm, or name a tenant or an operation.</source>
        <translation>范围 *:* 会暂停所有租户和所有操作的全部接收：请勾选上方的复选框确认，或者指定一个租户或操作。</translation>
    </message>
    <message>
        <source>Pause everything</source>
        <translation>全部暂停</translation>
    </message>
    <message>
        <source>Resuming %1 in steps: every key admitted at %2 unless its keys fail first. Audit entry #%3.</source>
        <translation>正在分步恢复 %1：除非其键先失败，将于 %2 接纳全部键。审计条目 #%3。</translation>
    </message>
</context>
<context>
    <name>idem::console::PauseRamp</name>
    <message>
        <source>at least %1</source>
        <translation>至少 %1</translation>
    </message>
    <message>
        <source>Resuming sends %1 retries due in the next %2 min (%3 due already, %4 in the busiest minute) and %5 claims turned away since %6: %7 in all.</source>
        <translation>恢复将发出未来 %2 分钟内到期的 %1 个重试（%3 个已到期，最忙的一分钟 %4 个），以及自 %6 起被拒绝的 %5 次认领：共 %7。</translation>
    </message>
    <message>
        <source>Ramp done: every key admitted.</source>
        <translation>分步恢复完成：已接纳全部键。</translation>
    </message>
    <message>
        <source>%1 % of %2 admitted claims failed</source>
        <translation>%2 次已接纳认领中有 %1 % 失败</translation>
    </message>
    <message>
        <source>no admitted claim yet</source>
        <translation>尚无已接纳的认领</translation>
    </message>
    <message>
        <source>Ramping: step %1 of %2, %3 % of keys admitted; %4 (re-pauses above %5 %).</source>
        <translation>分步恢复中：第 %1 步（共 %2 步），接纳 %3 % 的键；%4（超过 %5 % 时重新暂停）。</translation>
    </message>
</context>
<context>
    <name>idem::console::PauseWatch</name>
    <message>
        <source>%1 (everything)</source>
        <translation>%1（全部）</translation>
    </message>
    <message>
        <source>%1 (all tenants)</source>
        <translation>%1（所有租户）</translation>
    </message>
    <message>
        <source>%1 (all operations)</source>
        <translation>%1（所有操作）</translation>
    </message>
    <message>
        <source>until resumed</source>
        <translation>直到恢复</translation>
    </message>
    <message>
        <source>until %1 (%2 left)</source>
        <translation>直到 %1（剩余 %2）</translation>
    </message>
</context>
<context>
    <name>idem::console::RedriveWatch</name>
    <message>
        <source>%1 is not re-drivable (no worker registered it, so no request is stored): the key waits for its client</source>
        <translation>%1 不可重驱（没有工作进程注册它，因此未存储请求）：该键等待其客户端</translation>
    </message>
    <message numerus="yes">
        <source>%n worker(s) of %1 are online</source>
        <translation>
            <numerusform>%1 有 %n 个工作进程在线</numerusform>
        </translation>
    </message>
    <message>
        <source>No re-driver for %1 is online: the key waits for its client</source>
        <translation>%1 没有在线的重驱器：该键等待其客户端</translation>
    </message>
    <message>
        <source>Whether a re-driver is online could not be read: %1</source>
        <translation>无法读取是否有重驱器在线：%1</translation>
    </message>
    <message>
        <source>Looking for re-drivers of %1…</source>
        <translation>正在查找 %1 的重驱器…</translation>
    </message>
    <message>
        <source>Keys of other operations are requeued only: they wait for their clients</source>
        <translation>其他操作的键仅重新排队：它们等待各自的客户端</translation>
    </message>
    <message>
        <source>No re-driver of any operation is online: the keys wait for their clients</source>
        <translation>没有任何操作的重驱器在线：这些键等待各自的客户端</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>已排队</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>succeeded</source>
        <translation>已成功</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>已失败</translation>
    </message>
    <message>
        <source>conflict</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>gone</source>
        <translation>已消失</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 not re-executable (no stored request)</source>
        <translation>%1 个不可重新执行（无已存储请求）</translation>
    </message>
    <message>
        <source>%1 requeued: none re-executed yet</source>
        <translation>已重新排队 %1 个：尚无重新执行</translation>
    </message>
    <message>
        <source>%1 requeued: %2</source>
        <translation>已重新排队 %1 个：%2</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message numerus="yes">
        <source>%n byte(s)</source>
        <translation>
            <numerusform>%n 字节</numerusform>
        </translation>
    </message>
    <message>
        <source>No request is stored for this key: a re-execution has nothing to run (its operation is not re-drivable, or the key was claimed before it was registered).</source>
        <translation>此键没有已存储的请求：重新执行无可运行之物（其操作不可重驱，或该键在操作注册之前被认领）。</translation>
    </message>
    <message>
        <source>A request is stored (%1); reading it needs the read_requests right.</source>
        <translation>已存储请求（%1）；读取其内容需要 read_requests 权限。</translation>
    </message>
    <message>
        <source>A request is stored (%1, since %2); fields its operation redacts read &quot;[redacted]&quot;.</source>
        <translation>已存储请求（%1，自 %2 起）；其操作要求遮蔽的字段显示为 &quot;[redacted]&quot;。</translation>
    </message>
    <message>
        <source>A request is stored (%1); fields its operation redacts read &quot;[redacted]&quot;.</source>
        <translation>已存储请求（%1）；其操作要求遮蔽的字段显示为 &quot;[redacted]&quot;。</translation>
    </message>
    <message>
        <source>No re-driver for %1 is online (%2 was last seen %3 ago, at %4): the key waits for its client</source>
        <translation>%1 没有在线的重驱器（%2 最后一次出现在 %3 前，于 %4）：该键等待其客户端</translation>
    </message>
</context>
<context>
    <name>idem::console::ResumeRampPanel</name>
    <message>
        <source>Reading what a resume sends…</source>
        <translation>正在读取恢复将发出的负载…</translation>
    </message>
    <message>
        <source>Resume in steps: admit a growing share of keys (by key hash), pause again by itself when they fail</source>
        <translation>分步恢复：按键哈希逐步接纳更多键，失败过多时自动重新暂停</translation>
    </message>
    <message>
        <source>Percentages of keys admitted step by step, rising, the last 100.</source>
        <translation>每一步接纳的键的百分比，递增，最后一步为 100。</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Once a step admitted 20 claims, more failures than this share of them pause the scope again, until resumed.</source>
        <translation>某一步接纳 20 次认领后，失败比例超过此值时，该范围将重新暂停，直到恢复。</translation>
    </message>
    <message>
        <source>Steps (%):</source>
        <translation>步骤（%）：</translation>
    </message>
    <message>
        <source>Each step:</source>
        <translation>每一步：</translation>
    </message>
    <message>
        <source>Pause again above:</source>
        <translation>超过此值重新暂停：</translation>
    </message>
    <message>
        <source>What a resume sends could not be read: %1</source>
        <translation>无法读取恢复将发出的负载：%1</translation>
    </message>
    <message>
        <source>Steps are 2 to 20 rising percentages from 1 to 100 separated by commas, the last 100 (e.g. 10,25,50,100).</source>
        <translation>步骤是 2 到 20 个以逗号分隔、从 1 到 100 递增的百分比，最后一个为 100（例如 10,25,50,100）。</translation>
    </message>
</context>
<context>
    <name>idem::console::RoleRights</name>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>idem::console::ServerInfo</name>
    <message>
        <source>operator (superuser)</source>
        <translation>操作员（超级用户）</translation>
    </message>
    <message>
        <source>operator</source>
        <translation>操作员</translation>
    </message>
    <message>
        <source>reader</source>
        <translation>只读者</translation>
    </message>
    <message>
        <source>none: cannot read %1.task_idempotency (grant idem_reader)</source>
        <translation>无：无法读取 %1.task_idempotency（请授予 idem_reader）</translation>
    </message>
    <message>
        <source>this server is a standby: it replays what its primary wrote, figures are as of its replay point</source>
        <translation>此服务器是备库：它回放主库写入的内容，数字以其回放点为准</translation>
    </message>
    <message>
        <source>asynchronous (synchronous_standby_names is empty): a commit does not wait for any standby, so after a failover a success already acknowledged to a client can be forgotten and run again</source>
        <translation>异步（synchronous_standby_names 为空）：提交不等待任何备库，因此故障切换后，已向客户端确认的成功可能被遗忘并再次执行</translation>
    </message>
    <message>
        <source>synchronous to %1 (synchronous_commit = %2): a commit is acknowledged only once a synchronous standby has it, so a failover to that standby keeps every acknowledged success</source>
        <translation>同步到 %1（synchronous_commit = %2）：只有同步备库收到提交后才确认，因此切换到该备库会保留每一个已确认的成功</translation>
    </message>
    <message>
        <source>synchronous to %1 up to the standby&apos;s memory (synchronous_commit = remote_write): losing both servers at once can still forget an acknowledged success</source>
        <translation>同步到 %1 的内存为止（synchronous_commit = remote_write）：两台服务器同时失效时仍可能遗忘已确认的成功</translation>
    </message>
    <message>
        <source>asynchronous for this role&apos;s commits (synchronous_commit = %1, although synchronous_standby_names is %2): a failover can forget an acknowledged success</source>
        <translation>此角色的提交为异步（synchronous_commit = %1，尽管 synchronous_standby_names 为 %2）：故障切换可能遗忘已确认的成功</translation>
    </message>
    <message>
        <source>this server is read-only (default_transaction_read_only is on): it is not the primary, or is being demoted; recovery actions and pauses need the primary</source>
        <translation>此服务器是只读的（default_transaction_read_only 为 on）：它不是主库，或正在被降级；恢复操作和暂停需要主库</translation>
    </message>
    <message>
        <source>%1:%2 (a local socket)</source>
        <translation>%1:%2（本地套接字）</translation>
    </message>
    <message>
        <source>%1 (connected to %2:%3)</source>
        <translation>%1（经由 %2:%3 连接）</translation>
    </message>
    <message>
        <source>standby</source>
        <translation>备库</translation>
    </message>
    <message>
        <source>read-only primary</source>
        <translation>只读主库</translation>
    </message>
    <message>
        <source>primary</source>
        <translation>主库</translation>
    </message>
    <message>
        <source>timeline %1</source>
        <translation>时间线 %1</translation>
    </message>
    <message>
        <source>timeline not known (this role may not call pg_control_checkpoint())</source>
        <translation>时间线未知（此角色无权调用 pg_control_checkpoint()）</translation>
    </message>
    <message>
        <source>system %1</source>
        <translation>系统 %1</translation>
    </message>
    <message>
        <source>system not known (this role may not call pg_control_system())</source>
        <translation>系统未知（此角色无权调用 pg_control_system()）</translation>
    </message>
    <message>
        <source>none listed: this server is a standby</source>
        <translation>不列出：此服务器是备库</translation>
    </message>
    <message>
        <source>no replay lag reported</source>
        <translation>未报告回放延迟</translation>
    </message>
    <message>
        <source>replay lag %1 s</source>
        <translation>回放延迟 %1 秒</translation>
    </message>
    <message>
        <source>%1 (%2, %3, %4)</source>
        <translation>%1（%2，%3，%4）</translation>
    </message>
    <message>
        <source>unnamed</source>
        <translation>未命名</translation>
    </message>
    <message numerus="yes">
        <source>%n standby(s) this role may not look into (grant pg_monitor or pg_read_all_stats)</source>
        <translation>
            <numerusform>%n 个此角色无权查看的备库（请授予 pg_monitor 或 pg_read_all_stats）</numerusform>
        </translation>
    </message>
    <message>
        <source>none connected now</source>
        <translation>当前没有已连接的备库</translation>
    </message>
    <message>
        <source>rights: %1</source>
        <translation>权限：%1</translation>
    </message>
    <message>
        <source>no reply for %1 s and behind: its replay lag is not known</source>
        <translation>已 %1 秒没有应答且落后：其回放延迟未知</translation>
    </message>
</context>
<context>
    <name>idem::console::ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotAuditModel</name>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>At (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>动作</translation>
    </message>
    <message>
        <source>Actor (role, OS user)</source>
        <translation>执行者（角色，操作系统用户）</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>The audit was empty when the snapshot was taken.</source>
        <translation>生成快照时审计记录为空。</translation>
    </message>
    <message>
        <source>Entry #%1 does not hash to its entry_hash: it was edited.</source>
        <translation>记录 #%1 的哈希与其 entry_hash 不符：它被修改过。</translation>
    </message>
    <message>
        <source>The link from entry #%1 to #%2 is broken.</source>
        <translation>从记录 #%1 到 #%2 的链接已断裂。</translation>
    </message>
    <message>
        <source>The chain head #%1 is not the newest entry of the tail.</source>
        <translation>链头 #%1 不是尾部最新的记录。</translation>
    </message>
    <message>
        <source>Tail entries checked offline: %1; every hash and link is correct.</source>
        <translation>离线校验的尾部记录：%1；所有哈希和链接均正确。</translation>
    </message>
    <message>
        <source>Tail entries checked offline: %1; every link is correct (hashes not rechecked: the images are redacted).</source>
        <translation>离线校验的尾部记录：%1；所有链接均正确（未重新校验哈希：记录映像已隐去）。</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotAuditPage</name>
    <message>
        <source>the newest %1 of %2 entries (truncated at the limit of %3)</source>
        <translation>%2 条记录中最新的 %1 条（在上限 %3 处截断）</translation>
    </message>
    <message>
        <source>all %1 of %2 entries (limit %3)</source>
        <translation>全部 %1 条，共 %2 条记录（上限 %3）</translation>
    </message>
    <message>
        <source>Audit tail: %1. Chain head at the snapshot: entry #%2, hash &lt;tt&gt;%3&lt;/tt&gt;. Compare it with the live table&apos;s to show that nothing was appended or rewritten since.</source>
        <translation>审计尾部：%1。快照时的链头：记录 #%2，哈希 &lt;tt&gt;%3&lt;/tt&gt;。将其与实时表中的链头比较，可证明此后没有追加或改写任何记录。</translation>
    </message>
    <message>
        <source>Audit tail: %1. The audit was empty: no chain head.</source>
        <translation>审计尾部：%1。审计为空：没有链头。</translation>
    </message>
    <message>
        <source>&lt;b&gt;#%1 %2&lt;/b&gt; on &lt;tt&gt;%3&lt;/tt&gt; at %4 UTC by %5 (OS user %6, host %7, %8)</source>
        <translation>&lt;b&gt;#%1 %2&lt;/b&gt;，对象 &lt;tt&gt;%3&lt;/tt&gt;，时间 %4 UTC，执行者 %5（操作系统用户 %6，主机 %7，%8）</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotExportFlow</name>
    <message>
        <source>all tenants</source>
        <translation>所有租户</translation>
    </message>
    <message>
        <source>tenant %1</source>
        <translation>租户 %1</translation>
    </message>
    <message>
        <source>all operations</source>
        <translation>所有操作</translation>
    </message>
    <message>
        <source>operation %1</source>
        <translation>操作 %1</translation>
    </message>
    <message numerus="yes">
        <source>One consistent read of %1 (%2, %3; figures over the dashboard&apos;s last %n minute(s)), read-only through the monitor connection.</source>
        <translation>
            <numerusform>对 %1 的一次一致性读取（%2，%3；数字为仪表盘最近 %n 分钟），通过监控连接只读进行。</numerusform>
        </translation>
    </message>
    <message>
        <source>database %1 on %2:%3 as %4 (schema %5)</source>
        <translation>%2:%3 上的数据库 %1，角色 %4（模式 %5）</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotExportUi</name>
    <message>
        <source>Exporting the snapshot to %1
%2</source>
        <translation>正在将快照导出到 %1
%2</translation>
    </message>
    <message>
        <source>Export snapshot</source>
        <translation>导出快照</translation>
    </message>
    <message>
        <source>Connect to a database first: the snapshot is read from the monitor connection.</source>
        <translation>请先连接数据库：快照通过监控连接读取。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Exporting the snapshot to %1</source>
        <translation>正在将快照导出到 %1</translation>
    </message>
    <message>
        <source>Taken at %1 (server clock, UTC).</source>
        <translation>生成于 %1（服务器时钟，UTC）。</translation>
    </message>
    <message>
        <source>Signed with Ed25519 key %1.</source>
        <translation>已用 Ed25519 密钥 %1 签名。</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotExporter</name>
    <message>
        <source>opening the snapshot transaction</source>
        <translation>正在开启快照事务</translation>
    </message>
    <message>
        <source>reading the figures</source>
        <translation>正在读取数字</translation>
    </message>
    <message>
        <source>reading rows</source>
        <translation>正在读取行</translation>
    </message>
    <message>
        <source>reading the counters history</source>
        <translation>正在读取计数器历史</translation>
    </message>
    <message>
        <source>reading the audit tail</source>
        <translation>正在读取审计尾部</translation>
    </message>
    <message>
        <source>read</source>
        <translation>已读取</translation>
    </message>
    <message>
        <source>writing snapshot.json</source>
        <translation>正在写入 snapshot.json</translation>
    </message>
    <message>
        <source>writing CSV files</source>
        <translation>正在写入 CSV 文件</translation>
    </message>
    <message>
        <source>drawing charts</source>
        <translation>正在绘制图表</translation>
    </message>
    <message>
        <source>writing report.html</source>
        <translation>正在写入 report.html</translation>
    </message>
    <message>
        <source>writing the chart images</source>
        <translation>正在写入图表图片</translation>
    </message>
    <message>
        <source>writing report.pdf</source>
        <translation>正在写入 report.pdf</translation>
    </message>
    <message>
        <source>writing MANIFEST</source>
        <translation>正在写入 MANIFEST</translation>
    </message>
    <message>
        <source>loading the signing key</source>
        <translation>正在加载签名密钥</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>%1: %2 of %3 rows%4</source>
        <translation>%1：%2/%3 行%4</translation>
    </message>
    <message>
        <source> (bound %1 reached)</source>
        <translation>（已达上限 %1）</translation>
    </message>
    <message>
        <source>Idem incident snapshot %1</source>
        <translation>Idem 事故快照 %1</translation>
    </message>
    <message>
        <source>audit: %1 of %2 entries, chain head %3</source>
        <translation>审计：%1/%2 条记录，链头 %3</translation>
    </message>
    <message>
        <source>(empty)</source>
        <translation>（空）</translation>
    </message>
    <message>
        <source>The export was cancelled. Nothing was written to %1.</source>
        <translation>导出已取消。没有向 %1 写入任何内容。</translation>
    </message>
    <message>
        <source>Snapshot written to %1.</source>
        <translation>快照已写入 %1。</translation>
    </message>
    <message>
        <source>Nothing was written to %1.</source>
        <translation>没有向 %1 写入任何内容。</translation>
    </message>
    <message>
        <source>The connection was lost during the export (%1). %2</source>
        <translation>导出过程中连接丢失（%1）。%2</translation>
    </message>
    <message>
        <source>The database refused a query of the export%1: %2
%3</source>
        <translation>数据库拒绝了导出的一条查询%1：%2
%3</translation>
    </message>
    <message>
        <source>The snapshot could not be written: %1
%2</source>
        <translation>无法写入快照：%1
%2</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotOpener</name>
    <message>
        <source>at an unknown time</source>
        <translation>时间未知</translation>
    </message>
    <message>
        <source>%1 UTC (%2 local)</source>
        <translation>%1 UTC（本地时间 %2）</translation>
    </message>
    <message>
        <source>default host</source>
        <translation>默认主机</translation>
    </message>
    <message>
        <source>local socket</source>
        <translation>本地套接字</translation>
    </message>
    <message>
        <source>This snapshot was made by a newer Idem (format %1); this console reads up to format %2. Open it with a newer Idem console.</source>
        <translation>此快照由更新版本的 Idem 生成（格式 %1）；此控制台最多只能读取格式 %2。请用更新版本的 Idem 控制台打开。</translation>
    </message>
    <message>
        <source>This snapshot says it has format %1, which no Idem release wrote; this console reads formats 1 to %2.</source>
        <translation>此快照声称其格式为 %1，但没有任何 Idem 版本写过这种格式；此控制台可读取格式 1 到 %2。</translation>
    </message>
    <message>
        <source>The snapshot in %1 cannot be read: its snapshot.json is damaged or not an Idem snapshot.

%2</source>
        <translation>无法读取 %1 中的快照：其 snapshot.json 已损坏或不是 Idem 快照。

%2</translation>
    </message>
    <message>
        <source>%1 is not a snapshot bundle.

%2</source>
        <translation>%1 不是快照包。

%2</translation>
    </message>
    <message>
        <source>The snapshot in %1 could not be opened: %2</source>
        <translation>无法打开 %1 中的快照：%2</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotTaskModel</name>
    <message>
        <source>none (expired)</source>
        <translation>无（已过期）</translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation>剩余 %1</translation>
    </message>
    <message>
        <source>expired %1 before</source>
        <translation>在此之前 %1 已过期</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Lease (at snapshot)</source>
        <translation>租约（快照时）</translation>
    </message>
    <message>
        <source>Next attempt (UTC)</source>
        <translation>下次尝试（UTC）</translation>
    </message>
    <message>
        <source>Created (UTC)</source>
        <translation>创建时间（UTC）</translation>
    </message>
    <message>
        <source>Updated (UTC)</source>
        <translation>更新时间（UTC）</translation>
    </message>
    <message>
        <source>Error class</source>
        <translation>错误类别</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotTaskPane</name>
    <message>
        <source>At (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <source>Select a task to see its record as the snapshot holds it.</source>
        <translation>选择一个任务以查看快照中保存的记录。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; task at the snapshot, updated %2 UTC</source>
        <translation>快照中的 &lt;b&gt;%1&lt;/b&gt; 任务，更新于 %2 UTC</translation>
    </message>
    <message>
        <source>%1 (until %2 UTC)</source>
        <translation>%1（至 %2 UTC）</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>%1 UTC</source>
        <translation>%1 UTC</translation>
    </message>
    <message>
        <source>%1 / %2 UTC</source>
        <translation>%1 / %2 UTC</translation>
    </message>
    <message>
        <source>(redacted) %1</source>
        <translation>（已隐去）%1</translation>
    </message>
    <message>
        <source>The result was redacted for sharing: its SHA-256 and length stand in for it.</source>
        <translation>为便于分享，结果已被隐去：以其 SHA-256 和长度代替。</translation>
    </message>
    <message>
        <source>Result: %1 bytes; showing the first %2 characters.</source>
        <translation>结果：%1 字节；显示前 %2 个字符。</translation>
    </message>
    <message>
        <source>Result: %1 bytes.</source>
        <translation>结果：%1 字节。</translation>
    </message>
    <message>
        <source>Messages were redacted for sharing.</source>
        <translation>为便于分享，消息已被隐去。</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Audit in snapshot (%1)</source>
        <translation>快照中的审计（%1）</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotTasksPage</name>
    <message>
        <source>%1 of %2 rows</source>
        <translation>%1/%2 行</translation>
    </message>
    <message>
        <source> (truncated at the limit of %1)</source>
        <translation>（在上限 %1 处截断）</translation>
    </message>
    <message>
        <source> (limit %1)</source>
        <translation>（上限 %1）</translation>
    </message>
    <message>
        <source>Expired leases</source>
        <translation>过期租约</translation>
    </message>
    <message>
        <source>Longest running</source>
        <translation>运行最久</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Uncertain outcomes</source>
        <translation>结果不确定</translation>
    </message>
    <message>
        <source>Recent digest conflicts</source>
        <translation>近期摘要冲突</translation>
    </message>
    <message>
        <source>%1
%2 of %3%4</source>
        <translation>%1
%2/%3%4</translation>
    </message>
    <message>
        <source> (truncated)</source>
        <translation>（已截断）</translation>
    </message>
    <message>
        <source>%1
%2 counter rows</source>
        <translation>%1
%2 行计数器</translation>
    </message>
    <message>
        <source>filter these rows by key (substring)</source>
        <translation>按键（子串）筛选这些行</translation>
    </message>
    <message>
        <source>Minute (UTC)</source>
        <translation>分钟（UTC）</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Conflicts</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: %2. A conflict changes no row, so these per-minute counters are its only trace: %3 conflicts in %4 counter rows (of %5%6).</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：%2。冲突不会修改任何行，因此这些每分钟计数器是它唯一的痕迹：%4 行计数器中共有 %3 次冲突（共 %5%6）。</translation>
    </message>
    <message>
        <source>, truncated</source>
        <translation>，已截断</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: %2.&lt;br&gt;Order: %3. %4.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：%2。&lt;br&gt;排序：%3。%4。</translation>
    </message>
    <message>
        <source>Waiting to retry</source>
        <translation>等待重试</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotWindow</name>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Console load: not part of a snapshot</source>
        <translation>控制台负载：不包含在快照中</translation>
    </message>
    <message>
        <source>Attempts histogram: not part of a snapshot</source>
        <translation>尝试次数分布：不包含在快照中</translation>
    </message>
    <message>
        <source>Dashboard</source>
        <translation>仪表盘</translation>
    </message>
    <message>
        <source>Tasks</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Audit</source>
        <translation>审计</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Read-only snapshot from %1</source>
        <translation>来自 %1 的只读快照</translation>
    </message>
    <message>
        <source>PostgreSQL %1, standby</source>
        <translation>PostgreSQL %1，备库</translation>
    </message>
    <message>
        <source>PostgreSQL %1, primary</source>
        <translation>PostgreSQL %1，主库</translation>
    </message>
    <message>
        <source>producer %1</source>
        <translation>生成者 %1</translation>
    </message>
    <message>
        <source>schema version %1 (this console knows %2)</source>
        <translation>模式版本 %1（此控制台已知 %2）</translation>
    </message>
    <message>
        <source>format version %1</source>
        <translation>格式版本 %1</translation>
    </message>
    <message>
        <source>redacted: %1</source>
        <translation>已隐去：%1</translation>
    </message>
    <message>
        <source>read as %1</source>
        <translation>以 %1 身份读取</translation>
    </message>
    <message>
        <source>only tenant %1, operation %2</source>
        <translation>仅租户 %1，操作 %2</translation>
    </message>
    <message>
        <source>Snapshot of %1 taken %2 — read-only</source>
        <translation>%1 的快照，生成于 %2 — 只读</translation>
    </message>
    <message>
        <source>&lt;b&gt;Verification FAILED: this bundle is not as it was written.&lt;/b&gt; The data below may have been altered.&lt;br&gt;%1</source>
        <translation>&lt;b&gt;校验失败：此快照包与写入时不一致。&lt;/b&gt;以下数据可能已被篡改。&lt;br&gt;%1</translation>
    </message>
    <message>
        <source>Unsigned: all %1 files match the MANIFEST, but whoever edited them could have rewritten it too.</source>
        <translation>未签名：全部 %1 个文件与 MANIFEST 一致，但修改文件的人也可能重写了 MANIFEST。</translation>
    </message>
    <message>
        <source>%1Snapshot %2, %3 (read-only) – Idem console</source>
        <translation>%1快照 %2，%3（只读）– Idem 控制台</translation>
    </message>
    <message>
        <source>UNVERIFIED </source>
        <translation>未校验 </translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Taken at</source>
        <translation>生成时间</translation>
    </message>
    <message>
        <source>Producer</source>
        <translation>生成者</translation>
    </message>
    <message>
        <source>Format version</source>
        <translation>格式版本</translation>
    </message>
    <message>
        <source>%1 (this console reads up to %2)</source>
        <translation>%1（此控制台最多可读取 %2）</translation>
    </message>
    <message>
        <source>Connection</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Admin connection</source>
        <translation>管理连接</translation>
    </message>
    <message>
        <source>%1 as %2</source>
        <translation>%1，身份 %2</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>PostgreSQL %1 (%2), database %3, %4</source>
        <translation>PostgreSQL %1（%2），数据库 %3，%4</translation>
    </message>
    <message>
        <source>standby</source>
        <translation>备库</translation>
    </message>
    <message>
        <source>primary</source>
        <translation>主库</translation>
    </message>
    <message>
        <source>Monitor role</source>
        <translation>监控角色</translation>
    </message>
    <message>
        <source>%1 (session %2); superuser %3, idem_reader %4, idem_operator %5</source>
        <translation>%1（会话 %2）；超级用户 %3，idem_reader %4，idem_operator %5</translation>
    </message>
    <message>
        <source>Schema</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>%1, version %2 (the exporting Idem knew %3)</source>
        <translation>%1，版本 %2（导出时的 Idem 已知 %3）</translation>
    </message>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>tenant %1, operation %2; figures over %3 min, long-unfinished after %4 min, history %5 min</source>
        <translation>租户 %1，操作 %2；数字为 %3 分钟内，超过 %4 分钟算长期未完成，历史 %5 分钟</translation>
    </message>
    <message>
        <source>Thresholds</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>%1 set by the exporting console</source>
        <translation>%1 个由导出的控制台设置</translation>
    </message>
    <message>
        <source>none in the snapshot: the tiles use this console&apos;s defaults</source>
        <translation>快照中没有：指标卡使用此控制台的默认值</translation>
    </message>
    <message>
        <source>Poll settings</source>
        <translation>轮询设置</translation>
    </message>
    <message>
        <source>every %1 ms, statement timeout %2 ms, wide refresh %3 ms</source>
        <translation>每 %1 毫秒，语句超时 %2 毫秒，完整刷新 %3 毫秒</translation>
    </message>
    <message>
        <source>Redacted</source>
        <translation>已隐去</translation>
    </message>
    <message>
        <source>Verification</source>
        <translation>校验</translation>
    </message>
    <message>
        <source>This snapshot lists no rows for “%1”: it holds only its row sets (Tasks page).</source>
        <translation>此快照中没有“%1”的行：它只包含各组行集（任务页）。</translation>
    </message>
    <message>
        <source>Cannot open the snapshot</source>
        <translation>无法打开快照</translation>
    </message>
    <message>
        <source>Close snapshot</source>
        <translation>关闭快照</translation>
    </message>
    <message>
        <source>Trust this signer…</source>
        <translation>信任此签名者…</translation>
    </message>
    <message>
        <source>&lt;b&gt;Signed by an unknown key %1&lt;/b&gt;: all %2 files match the MANIFEST, but this console trusts no such key, and anyone who edited the bundle could have re-signed it with a key of their own. Trust the key (Trust this signer…) only if you know whose it is.</source>
        <translation>&lt;b&gt;由未知密钥 %1 签名&lt;/b&gt;：全部 %2 个文件与 MANIFEST 一致，但本控制台不信任该密钥；任何修改过快照包的人都可能用自己的密钥重新签名。只有在确知该密钥属于谁时，才信任它（信任此签名者…）。</translation>
    </message>
    <message>
        <source>Signature valid, by the trusted key %1 (SHA-256 %2); all %3 files match the MANIFEST.</source>
        <translation>签名有效，由可信密钥 %1 签名（SHA-256 %2）；全部 %3 个文件与 MANIFEST 一致。</translation>
    </message>
    <message>
        <source>(unnamed)</source>
        <translation>（未命名）</translation>
    </message>
    <message>
        <source>Signing key SHA-256 %1</source>
        <translation>签名密钥 SHA-256 %1</translation>
    </message>
    <message>
        <source>Processing vs expired: rows processing at the snapshot</source>
        <translation>处理中与租约过期：快照时处理中的行</translation>
    </message>
    <message>
        <source>The rows processing at the snapshot&apos;s instant, counted back a minute at a time: by when their attempt started and when their lease ran out. Rows that finished before the instant are not counted, so earlier minutes show at least this many; the last point is exact.</source>
        <translation>快照时刻处理中的行，按分钟向前回溯：依据其本次尝试开始的时间和租约到期的时间。在该时刻之前已完成的行不计入，因此较早的分钟显示的是下限；最后一个点是精确值。</translation>
    </message>
    <message>
        <source>Pauses and jobs</source>
        <translation>暂停与作业</translation>
    </message>
    <message>
        <source>It is not signed.</source>
        <translation>它没有签名。</translation>
    </message>
    <message>
        <source>It is signed by the trusted key %1: whoever holds that key wrote it like this.</source>
        <translation>它由受信任的密钥 %1 签名：持有该密钥的人就是这样写的。</translation>
    </message>
    <message>
        <source>It is signed by an unknown key %1.</source>
        <translation>它由未知密钥 %1 签名。</translation>
    </message>
    <message>
        <source>&lt;b&gt;This snapshot CONTRADICTS ITSELF: its events do not match its own audit trail or its instant.&lt;/b&gt; What it shows may have been forged; do not act on it. %1&lt;br&gt;%2</source>
        <translation>&lt;b&gt;此快照自相矛盾：其事件与其自身的审计链或快照时刻不符。&lt;/b&gt;其内容可能被伪造；请勿据此操作。%1&lt;br&gt;%2</translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotWorkPage</name>
    <message>
        <source>Scope</source>
        <translation>范围</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Paused by</source>
        <translation>暂停者</translation>
    </message>
    <message>
        <source>Since (UTC)</source>
        <translation>开始于 (UTC)</translation>
    </message>
    <message>
        <source>Until (UTC)</source>
        <translation>截止 (UTC)</translation>
    </message>
    <message>
        <source>Ended (UTC)</source>
        <translation>结束于 (UTC)</translation>
    </message>
    <message>
        <source>Ended by</source>
        <translation>结束者</translation>
    </message>
    <message>
        <source>Why ended</source>
        <translation>结束原因</translation>
    </message>
    <message>
        <source>Job</source>
        <translation>作业</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Started (UTC)</source>
        <translation>启动于 (UTC)</translation>
    </message>
    <message>
        <source>Started by</source>
        <translation>启动者</translation>
    </message>
    <message>
        <source>Approved by</source>
        <translation>批准者</translation>
    </message>
    <message>
        <source>Matched</source>
        <translation>匹配</translation>
    </message>
    <message>
        <source>Changed</source>
        <translation>已更改</translation>
    </message>
    <message>
        <source>Refused</source>
        <translation>被拒绝</translation>
    </message>
    <message>
        <source>Skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <source>&lt;b&gt;Pauses&lt;/b&gt;: not in this snapshot (written before snapshots carried them, or from a schema without pauses).</source>
        <translation>&lt;b&gt;暂停&lt;/b&gt;：此快照中没有（写于快照包含暂停之前，或来自没有暂停功能的模式）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Pauses&lt;/b&gt;: %1 in force at the snapshot&apos;s instant, %2 listed (in force, past their end, or lifted within its %3 min of history)%4.</source>
        <translation>&lt;b&gt;暂停&lt;/b&gt;：快照时刻生效 %1 个，列出 %2 个（生效中、已过期未解除，或在其 %3 分钟历史内解除）%4。</translation>
    </message>
    <message>
        <source>; only the first %1 are in the snapshot</source>
        <translation>；快照中只有前 %1 个</translation>
    </message>
    <message>
        <source>in force</source>
        <translation>生效中</translation>
    </message>
    <message>
        <source>ended</source>
        <translation>已结束</translation>
    </message>
    <message>
        <source>until resumed</source>
        <translation>直到恢复</translation>
    </message>
    <message>
        <source>ran out</source>
        <translation>已到期</translation>
    </message>
    <message>
        <source>&lt;b&gt;Recovery jobs&lt;/b&gt;: not in this snapshot (written before snapshots carried them, or from a schema without jobs).</source>
        <translation>&lt;b&gt;恢复作业&lt;/b&gt;：此快照中没有（写于快照包含作业之前，或来自没有作业功能的模式）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Recovery jobs&lt;/b&gt;: %1 open at the snapshot&apos;s instant or ended within its %2 min of history%3.</source>
        <translation>&lt;b&gt;恢复作业&lt;/b&gt;：%1 个在快照时刻未结束或在其 %2 分钟历史内结束%3。</translation>
    </message>
    <message>
        <source>; only the newest %1 are in the snapshot</source>
        <translation>；快照中只有最新的 %1 个</translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation>等待批准</translation>
    </message>
    <message>
        <source>not yet</source>
        <translation>尚未</translation>
    </message>
    <message>
        <source>not needed</source>
        <translation>无需</translation>
    </message>
</context>
<context>
    <name>idem::console::StatusPanel</name>
    <message>
        <source>%1 (server clock)</source>
        <translation>%1（服务器时钟）</translation>
    </message>
    <message>
        <source>State:</source>
        <translation>状态：</translation>
    </message>
    <message>
        <source>Server:</source>
        <translation>服务器：</translation>
    </message>
    <message>
        <source>Database:</source>
        <translation>数据库：</translation>
    </message>
    <message>
        <source>Role:</source>
        <translation>角色：</translation>
    </message>
    <message>
        <source>Privilege:</source>
        <translation>权限：</translation>
    </message>
    <message>
        <source>Schema:</source>
        <translation>模式：</translation>
    </message>
    <message>
        <source>TLS:</source>
        <translation>TLS：</translation>
    </message>
    <message>
        <source>not connected</source>
        <translation>未连接</translation>
    </message>
    <message>
        <source>connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>connected</source>
        <translation>已连接</translation>
    </message>
    <message>
        <source>disconnected (showing the last known state)</source>
        <translation>已断开连接（显示最后已知的状态）</translation>
    </message>
    <message>
        <source>PostgreSQL %1 at %2:%3</source>
        <translation>位于 %2:%3 的 PostgreSQL %1</translation>
    </message>
    <message>
        <source>%1 (logged in as %2)</source>
        <translation>%1（登录身份 %2）</translation>
    </message>
    <message>
        <source>%1: cannot be read (%2)</source>
        <translation>%1：无法读取（%2）</translation>
    </message>
    <message>
        <source>%1: not created yet (this console ships version %2)</source>
        <translation>%1：尚未创建（此控制台自带版本 %2）</translation>
    </message>
    <message>
        <source>%1, version %2: newer than this console (%3), read-only</source>
        <translation>%1，版本 %2：比此控制台（%3）新，只读</translation>
    </message>
    <message>
        <source>%1, version %2: older than this console (%3)</source>
        <translation>%1，版本 %2：比此控制台（%3）旧</translation>
    </message>
    <message>
        <source>%1, version %2 (current)</source>
        <translation>%1，版本 %2（最新）</translation>
    </message>
    <message>
        <source>%1; problems: %2</source>
        <translation>%1；问题：%2</translation>
    </message>
    <message>
        <source>yes (%1, %2)</source>
        <translation>是（%1，%2）</translation>
    </message>
    <message>
        <source>no: traffic and password travel in clear text</source>
        <translation>否：流量和密码以明文传输</translation>
    </message>
    <message>
        <source>Connected at:</source>
        <translation>连接于：</translation>
    </message>
    <message>
        <source>Read:</source>
        <translation>读取于：</translation>
    </message>
    <message>
        <source>the connection failed</source>
        <translation>连接失败</translation>
    </message>
    <message>
        <source>disconnected: %1; reconnecting by itself (showing the last known state)</source>
        <translation>已断开：%1；正在自动重连（显示最后已知的状态）</translation>
    </message>
    <message>
        <source>disconnected: %1 (showing the last known state)</source>
        <translation>已断开：%1（显示最后已知的状态）</translation>
    </message>
    <message>
        <source>Pooler:</source>
        <translation>连接池：</translation>
    </message>
    <message>
        <source>Replication:</source>
        <translation>复制：</translation>
    </message>
    <message>
        <source>a connection pooler (PgBouncer) answers for the server: the console keeps no session state (settings per transaction, unnamed statements), as transaction pooling needs</source>
        <translation>由连接池（PgBouncer）代替服务器应答：控制台不保留任何会话状态（按事务设置、未命名语句），以满足事务池模式的要求</translation>
    </message>
    <message>
        <source>none: connected to the server itself</source>
        <translation>无：直接连接到服务器</translation>
    </message>
    <message>
        <source>Node:</source>
        <translation>节点：</translation>
    </message>
    <message>
        <source>Node since:</source>
        <translation>节点始于：</translation>
    </message>
    <message>
        <source>Standbys:</source>
        <translation>备库：</translation>
    </message>
    <message>
        <source>%1, server clock %2; read again every %3 s while connected</source>
        <translation>%1，服务器时钟 %2；连接期间每 %3 秒重新读取</translation>
    </message>
    <message>
        <source>%1 (this console&apos;s clock), since connecting</source>
        <translation>%1（本控制台时钟），自连接起</translation>
    </message>
    <message>
        <source>%1 (this console&apos;s clock); before: %2</source>
        <translation>%1（本控制台时钟）；之前：%2</translation>
    </message>
    <message>
        <source>timeline %1 follows %2 since %3: a failover, on every console&apos;s charts</source>
        <translation>时间线 %1 自 %3 起接替 %2：一次故障切换，显示在每个控制台的图表上</translation>
    </message>
    <message>
        <source>timeline %1 is the first recorded for this system (since %2)</source>
        <translation>时间线 %1 是此系统记录的第一条（自 %2 起）</translation>
    </message>
    <message>
        <source>failovers are not recorded: the schema&apos;s owner may not call pg_control_system()</source>
        <translation>不记录故障切换：模式的所有者无权调用 pg_control_system()</translation>
    </message>
    <message>
        <source>the timeline could not be recorded: %1</source>
        <translation>无法记录时间线：%1</translation>
    </message>
    <message>
        <source>At risk:</source>
        <translation>风险：</translation>
    </message>
    <message>
        <source>not available: this role cannot read the schema</source>
        <translation>不可用：此角色无法读取该模式</translation>
    </message>
    <message>
        <source>not read: %1</source>
        <translation>未读取：%1</translation>
    </message>
    <message>
        <source>read on the primary: this server is a standby</source>
        <translation>请在主库上读取：此服务器是备库</translation>
    </message>
    <message>
        <source>0: every acknowledged commit waits for a synchronous standby (synchronous_standby_names = %1)</source>
        <translation>0：每个已确认的提交都等待同步备库（synchronous_standby_names = %1）</translation>
    </message>
    <message>
        <source>an unnamed standby</source>
        <translation>一个未命名的备库</translation>
    </message>
    <message>
        <source>0 on %1 (synchronous)</source>
        <translation>%1 上为 0（同步）</translation>
    </message>
    <message>
        <source>0 on %1 (no lag)</source>
        <translation>%1 上为 0（无延迟）</translation>
    </message>
    <message numerus="yes">
        <source>%n standby(s) whose lag this role may not read (grant pg_monitor)</source>
        <translation>
            <numerusform>%n 个备库的延迟此角色无权读取（请授予 pg_monitor）</numerusform>
        </translation>
    </message>
    <message>
        <source>not available (idemctl migrate); no standby streams from this server</source>
        <translation>不可用（idemctl migrate）；没有备库从此服务器流复制</translation>
    </message>
    <message>
        <source>none: no standby streams from this server</source>
        <translation>无：没有备库从此服务器流复制</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 lags %2; the successes in that window: not available (idemctl migrate)</source>
        <translation>%1 延迟 %2；该时间窗口内的成功数：不可用（idemctl migrate）</translation>
    </message>
    <message>
        <source>%1 lags %2; the successes in that window: not available (this role may not count them: grant idem_reader)</source>
        <translation>%1 延迟 %2；该时间窗口内的成功数：不可用（此角色无权统计：请授予 idem_reader）</translation>
    </message>
    <message>
        <source>more than %1 successes acknowledged in the last %2 of lag are not on %3 yet</source>
        <translation>延迟的最近 %2 内已确认的成功超过 %1 个，尚未到达 %3</translation>
    </message>
    <message numerus="yes">
        <source>%n success(es) acknowledged in the last %1 of lag are not on %2 yet</source>
        <translation>
            <numerusform>延迟的最近 %1 内已确认的 %n 个成功尚未到达 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <source>the successes since then: not available (idemctl migrate)</source>
        <translation>此后的成功数：不可用（idemctl migrate）</translation>
    </message>
    <message>
        <source>the successes since then: not available (this role may not count them: grant idem_reader)</source>
        <translation>此后的成功数：不可用（此角色无权统计：授予 idem_reader）</translation>
    </message>
    <message numerus="yes">
        <source>%Ln acknowledged success(es)</source>
        <translation>
            <numerusform>%Ln 个已确认的成功</numerusform>
        </translation>
    </message>
    <message>
        <source>more than %1</source>
        <translation>超过 %1</translation>
    </message>
    <message>
        <source>at least %1</source>
        <translation>至少 %1</translation>
    </message>
    <message>
        <source>an unknown amount</source>
        <translation>未知数量</translation>
    </message>
    <message>
        <source>%1 since %2 (server clock) are not on %3: it has not replied for %4 and is %5 of WAL behind; a failover to it now loses them</source>
        <translation>自 %2（服务器时钟）以来的%1尚未到达 %3：它已有 %4 没有应答，落后 %5 的 WAL；此时故障转移到它会丢失这些成功</translation>
    </message>
    <message>
        <source>as long as it streamed</source>
        <translation>自流复制以来一直</translation>
    </message>
    <message>
        <source>not connected; its replication slot %1 holds its point</source>
        <translation>未连接；其复制槽 %1 保留了它的位置</translation>
    </message>
    <message>
        <source>not connected since %1</source>
        <translation>自 %1 起未连接</translation>
    </message>
    <message>
        <source>%1 since %2 (server clock) are not on %3: it is %4, %5 of WAL behind; a failover to it now loses them</source>
        <translation>自 %2（服务器时钟）以来的%1尚未到达 %3：它%4，落后 %5 的 WAL；此时故障转移到它会丢失这些成功</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>Rights:</source>
        <translation>权限：</translation>
    </message>
    <message>
        <source>%1: yes (%2)</source>
        <translation>%1：有（%2）</translation>
    </message>
    <message>
        <source>%1: no (%2)</source>
        <translation>%1：无（%2）</translation>
    </message>
    <message>
        <source>(this schema predates per-action rights, v21: idem_operator may do everything)</source>
        <translation>（此 schema 早于按操作划分的权限 v21：idem_operator 可以执行所有操作）</translation>
    </message>
</context>
<context>
    <name>idem::console::StorageModel</name>
    <message>
        <source>1 day</source>
        <translation>1 天</translation>
    </message>
    <message>
        <source>%1 days</source>
        <translation>%1 天</translation>
    </message>
    <message>
        <source>1 hour</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>%1 hours</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <source>1 minute</source>
        <translation>1 分钟</translation>
    </message>
    <message>
        <source>%1 minutes</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>1 second</source>
        <translation>1 秒</translation>
    </message>
    <message>
        <source>%1 seconds</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>A retry of any other key older than %1 executes again.</source>
        <translation>其他任何超过 %1 的键被重试时会再次执行。</translation>
    </message>
    <message>
        <source>A retry of a “%1” key older than %2 executes again.</source>
        <translation>超过 %2 的“%1”键被重试时会再次执行。</translation>
    </message>
    <message>
        <source>exact</source>
        <translation>精确</translation>
    </message>
    <message>
        <source>exact · %1 ago</source>
        <translation>精确 · %1 前</translation>
    </message>
    <message>
        <source>exact as of %1</source>
        <translation>截至 %1 的精确值</translation>
    </message>
    <message>
        <source>at least; exact %1 · %2 ago</source>
        <translation>至少；精确值 %1 · %2 前</translation>
    </message>
    <message>
        <source>at least (counted up to %1)</source>
        <translation>至少（最多计数到 %1）</translation>
    </message>
    <message>
        <source>at least</source>
        <translation>至少</translation>
    </message>
    <message>
        <source>estimate (%1)</source>
        <translation>估计（%1）</translation>
    </message>
    <message>
        <source>estimate</source>
        <translation>估计</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>running since %1: %2 rows removed so far, by %3</source>
        <translation>自 %1 起运行中：已删除 %2 行，执行者 %3</translation>
    </message>
    <message>
        <source>%1: stopped before it finished (%2 rows removed in %3 s), by %4</source>
        <translation>%1：未完成即停止（%3 秒内删除 %2 行），执行者 %4</translation>
    </message>
    <message>
        <source>%1: %2 rows removed in %3 s, by %4</source>
        <translation>%1：%3 秒内删除 %2 行，执行者 %4</translation>
    </message>
    <message>
        <source>planner statistics (pg_class.reltuples) minus the unfinished rows</source>
        <translation>规划器统计（pg_class.reltuples）减去未完成的行</translation>
    </message>
    <message>
        <source>statistics collector (n_live_tup) minus the unfinished rows</source>
        <translation>统计收集器（n_live_tup）减去未完成的行</translation>
    </message>
    <message>
        <source>no estimate before the first ANALYZE</source>
        <translation>首次 ANALYZE 之前没有估计值</translation>
    </message>
    <message>
        <source>started %1 and stopped without finishing: its session is gone (a failover, a restart or a killed process); %2 rows removed, by %3. The next purge closes it as abandoned.</source>
        <translation>%1 开始，未完成即停止：其会话已不存在（故障切换、重启或进程被终止）；已删除 %2 行，执行者 %3。下一次清理会将其标记为已放弃。</translation>
    </message>
    <message>
        <source>running since %1 as of the replay point (a standby cannot see the primary&apos;s sessions): %2 rows removed so far, by %3</source>
        <translation>截至回放点，自 %1 起运行中（备库看不到主库的会话）：已删除 %2 行，执行者 %3</translation>
    </message>
</context>
<context>
    <name>idem::console::StorageWidget</name>
    <message>
        <source>Processing</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>Waiting to retry</source>
        <translation>等待重试</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>已失败</translation>
    </message>
    <message>
        <source>Succeeded</source>
        <translation>已成功</translation>
    </message>
    <message>
        <source>Could not read the storage figures: %1</source>
        <translation>无法读取存储数据：%1</translation>
    </message>
    <message>
        <source>Rows by status</source>
        <translation>各状态的行数</translation>
    </message>
    <message>
        <source>Purge</source>
        <translation>清理</translation>
    </message>
    <message>
        <source>Retention of succeeded keys</source>
        <translation>成功键的保留期</translation>
    </message>
    <message>
        <source>Tables</source>
        <translation>表</translation>
    </message>
    <message>
        <source>Size of the task table over time</source>
        <translation>任务表大小随时间的变化</translation>
    </message>
    <message>
        <source>table</source>
        <translation>表数据</translation>
    </message>
    <message>
        <source>indexes</source>
        <translation>索引</translation>
    </message>
    <message>
        <source>rows (from the counters)</source>
        <translation>行数（由计数器推算）</translation>
    </message>
    <message>
        <source>rows</source>
        <translation>行</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Rows</source>
        <translation>行数</translation>
    </message>
    <message>
        <source>What the number is</source>
        <translation>数字的含义</translation>
    </message>
    <message>
        <source>Operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Keeps succeeded keys</source>
        <translation>成功键保留</translation>
    </message>
    <message>
        <source>Oldest succeeded</source>
        <translation>最早的成功键</translation>
    </message>
    <message>
        <source>Due for purge</source>
        <translation>待清理</translation>
    </message>
    <message>
        <source>Policy set</source>
        <translation>策略设定</translation>
    </message>
    <message>
        <source>Table</source>
        <translation>表</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Indexes</source>
        <translation>索引</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>Rows (estimate)</source>
        <translation>行数（估计）</translation>
    </message>
    <message>
        <source>Dead rows</source>
        <translation>死行</translation>
    </message>
    <message>
        <source>Last vacuum</source>
        <translation>上次 VACUUM</translation>
    </message>
    <message>
        <source>Last autovacuum</source>
        <translation>上次自动 VACUUM</translation>
    </message>
    <message>
        <source>Not read yet.</source>
        <translation>尚未读取。</translation>
    </message>
    <message>
        <source>%1 (default)</source>
        <translation>%1（默认）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>%1 ago</source>
        <translation>%1 前</translation>
    </message>
    <message>
        <source>completed %1</source>
        <translation>完成于 %1</translation>
    </message>
    <message>
        <source>Succeeded rows completed before %1 (%2)</source>
        <translation>在 %1 之前完成的成功行（%2）</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>Only succeeded keys are removed; processing, waiting and failed rows are kept whatever their age. The audit trail is never purged.</source>
        <translation>只删除成功的键；处理中、等待重试和已失败的行无论多旧都会保留。审计记录永不清理。</translation>
    </message>
    <message>
        <source>Now: %1</source>
        <translation>当前：%1</translation>
    </message>
    <message>
        <source>Last run: %1</source>
        <translation>上次运行：%1</translation>
    </message>
    <message>
        <source>Last run: never</source>
        <translation>上次运行：从未</translation>
    </message>
    <message>
        <source>Due for purge now: %1 succeeded rows past their horizon.</source>
        <translation>当前待清理：%1 个已超过保留期的成功行。</translation>
    </message>
    <message>
        <source>`idemctl purge --dry-run` lists what a run would remove; `idemctl purge` removes it in small batches that skip any row a worker is touching.</source>
        <translation>`idemctl purge --dry-run` 列出一次运行会删除的内容；`idemctl purge` 以小批次删除，并跳过工作进程正在使用的行。</translation>
    </message>
    <message>
        <source>planner statistics (pg_class.reltuples)</source>
        <translation>规划器统计（pg_class.reltuples）</translation>
    </message>
    <message>
        <source>bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>GB</source>
        <translation>GB</translation>
    </message>
    <message>
        <source>MB</source>
        <translation>MB</translation>
    </message>
    <message>
        <source>KB</source>
        <translation>KB</translation>
    </message>
    <message>
        <source>No size sample yet: one is taken at most every %1 while a console or idemctl reads.</source>
        <translation>尚无大小样本：控制台或 idemctl 读取时，最多每 %1 采集一次。</translation>
    </message>
    <message numerus="yes">
        <source>%n sample(s), at most one every %1</source>
        <translation>
            <numerusform>%n 个样本，最多每 %1 一个</numerusform>
        </translation>
    </message>
    <message>
        <source>Rows: counted back from now by the keys the claims created and the rows the purges removed, per hour (per ten minutes over the last two days; an estimate). </source>
        <translation>行数：从当前行数出发，按认领创建的键和清理删除的行逐小时倒推（最近两天按每十分钟；为估计值）。</translation>
    </message>
    <message>
        <source>not analysed yet: the statistics collector&apos;s live rows (n_live_tup)</source>
        <translation>尚未分析：统计收集器的活动行数（n_live_tup）</translation>
    </message>
    <message>
        <source>Size of the task table over time: not read yet</source>
        <translation>任务表大小随时间变化：尚未读取</translation>
    </message>
    <message>
        <source>A retention change waits for a second person&apos;s approval: `idemctl retention set` files a request, another login with the approve right approves it (Approvals), then `idemctl retention apply --request N --spec SHA256` applies it once.</source>
        <translation>保留期变更需等待第二人审批：`idemctl retention set` 提交请求，另一位拥有审批权限的登录在“审批”中批准后，由 `idemctl retention apply --request N --spec SHA256` 执行一次。</translation>
    </message>
    <message>
        <source>A manual purge waits for a second person&apos;s approval: `idemctl purge` files a request, another login with the approve right approves it (Approvals), then `idemctl purge --request N --spec SHA256` runs it once. Scheduled purges (pg_cron) keep running.</source>
        <translation>手动清理需等待第二人审批：`idemctl purge` 提交请求，另一位拥有审批权限的登录在“审批”中批准后，由 `idemctl purge --request N --spec SHA256` 执行一次。计划清理（pg_cron）照常运行。</translation>
    </message>
    <message>
        <source>Transaction horizon: who keeps dead rows from being removed</source>
        <translation>事务视界：谁让死行无法被清除</translation>
    </message>
    <message>
        <source>dead rows (samples)</source>
        <translation>死行（样本）</translation>
    </message>
    <message>
        <source>Holder</source>
        <translation>持有者</translation>
    </message>
    <message>
        <source>PID</source>
        <translation>PID</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Application</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Open for</source>
        <translation>已打开</translation>
    </message>
    <message>
        <source>Transaction ids</source>
        <translation>事务 ID 数</translation>
    </message>
    <message>
        <source>Query</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>Who holds back the transaction horizon shows from schema v26 on (idemctl migrate).</source>
        <translation>谁在拖住事务视界从 schema v26 起显示（idemctl migrate）。</translation>
    </message>
    <message>
        <source>Nothing holds back the horizon: no other open transaction, prepared transaction, replication slot or standby feedback. VACUUM can remove every dead row.</source>
        <translation>没有任何东西拖住视界：没有其他未结束的事务、预备事务、复制槽或备库反馈。VACUUM 可以清除所有死行。</translation>
    </message>
    <message>
        <source>⚠ Held past %1 by %2, while the Idem tables&apos; dead rows grew by %3 since %4: VACUUM cannot remove rows that died after it began, until it ends.</source>
        <translation>⚠ 视界被 %2 拖住已超过 %1，同时 Idem 表的死行自 %4 起增加了 %3：在它结束之前，VACUUM 无法清除它开始之后死亡的行。</translation>
    </message>
    <message>
        <source>Oldest: %1. VACUUM cannot remove rows that died after it began.</source>
        <translation>最早：%1。VACUUM 无法清除它开始之后死亡的行。</translation>
    </message>
    <message>
        <source>Dead rows in the Idem tables: ≈ %1 (statistics estimate, n_dead_tup). The horizon keeps at least %2 of them (tables vacuumed since it began: that vacuum removed what it could) and at most all %1.</source>
        <translation>Idem 表中的死行：≈ %1（统计估计，n_dead_tup）。视界至少保留其中 %2 行（自它开始后执行过 VACUUM 的表：那次 VACUUM 已清除能清除的），至多全部 %1 行。</translation>
    </message>
    <message>
        <source>Autovacuum: too few size samples yet to tell whether it keeps up (one every %1 while anyone reads).</source>
        <translation>自动 VACUUM：大小样本尚少，无法判断它是否跟得上（有人读取时每 %1 采集一个）。</translation>
    </message>
    <message>
        <source>Autovacuum does not keep up: %1 vacuums of the task table since %2; after %3 of the sample intervals with a vacuum its dead rows did not fall.</source>
        <translation>自动 VACUUM 跟不上：自 %2 起任务表执行了 %1 次 VACUUM；其中 %3 个含 VACUUM 的样本间隔之后死行没有减少。</translation>
    </message>
    <message>
        <source>Autovacuum keeps up: %1 vacuums of the task table since %2, each followed by fewer dead rows.</source>
        <translation>自动 VACUUM 跟得上：自 %2 起任务表执行了 %1 次 VACUUM，每次之后死行都减少了。</translation>
    </message>
    <message>
        <source>The owner of idem_horizon_holders lacks pg_read_all_stats: other roles&apos; sessions are missing here. Grant it to the role that ran idemctl migrate.</source>
        <translation>idem_horizon_holders 的属主没有 pg_read_all_stats：这里缺少其他角色的会话。请将其授予运行 idemctl migrate 的角色。</translation>
    </message>
    <message>
        <source>This login lacks pg_read_all_stats: it sees every holder&apos;s pid, role, application, state and age, but not another role&apos;s client address or query text; pg_read_all_stats adds them.</source>
        <translation>此登录名没有 pg_read_all_stats：它能看到每个持有者的 pid、角色、应用、状态和时长，但看不到其他角色的客户端地址和查询文本；pg_read_all_stats 可补上这两项。</translation>
    </message>
    <message>
        <source>hidden</source>
        <translation>已隐藏</translation>
    </message>
    <message>
        <source>transaction began %1; query began %2</source>
        <translation>事务开始于 %1；查询开始于 %2</translation>
    </message>
    <message>
        <source>hidden: another role&apos;s (pg_read_all_stats shows it)</source>
        <translation>已隐藏：属于其他角色（pg_read_all_stats 可显示）</translation>
    </message>
</context>
<context>
    <name>idem::console::TaskBrowserModel</name>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <source>Lease</source>
        <translation>租约</translation>
    </message>
    <message>
        <source>Next attempt</source>
        <translation>下次尝试</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>retryable_failed (uncertain)</source>
        <translation>retryable_failed（不确定）</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>expired %1 ago</source>
        <translation>%1 前已过期</translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation>剩余 %1</translation>
    </message>
</context>
<context>
    <name>idem::console::TaskBrowserWidget</name>
    <message>
        <source>Any status</source>
        <translation>任意状态</translation>
    </message>
    <message>
        <source>Unfinished</source>
        <translation>未完成</translation>
    </message>
    <message>
        <source>Expired lease</source>
        <translation>租约已过期</translation>
    </message>
    <message>
        <source>Uncertain outcome</source>
        <translation>结果不确定</translation>
    </message>
    <message>
        <source>Digest conflicts</source>
        <translation>摘要冲突</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Requeue…</source>
        <translation>重新入队…</translation>
    </message>
    <message>
        <source>Release lease…</source>
        <translation>释放租约…</translation>
    </message>
    <message>
        <source>Mark failed…</source>
        <translation>标记为失败…</translation>
    </message>
    <message>
        <source>Copy key</source>
        <translation>复制键</translation>
    </message>
    <message>
        <source>Copy as JSON</source>
        <translation>复制为 JSON</translation>
    </message>
    <message>
        <source>tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>key prefix</source>
        <translation>键前缀</translation>
    </message>
    <message>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <source>attempts ≥ </source>
        <translation>尝试次数 ≥ </translation>
    </message>
    <message>
        <source>failed since (2024-05-01T10:00Z)</source>
        <translation>失败时间晚于（2024-05-01T10:00Z）</translation>
    </message>
    <message>
        <source>Key A→Z</source>
        <translation>键 A→Z</translation>
    </message>
    <message>
        <source>Key Z→A</source>
        <translation>键 Z→A</translation>
    </message>
    <message>
        <source>Oldest update first (unfinished)</source>
        <translation>最早更新的在前（未完成）</translation>
    </message>
    <message>
        <source>Newest update first (unfinished)</source>
        <translation>最新更新的在前（未完成）</translation>
    </message>
    <message>
        <source>Counting…</source>
        <translation>正在计数…</translation>
    </message>
    <message numerus="yes">
        <source>%Ln record(s) match</source>
        <translation>
            <numerusform>%Ln 条记录匹配</numerusform>
        </translation>
    </message>
    <message>
        <source>about %L1 records match (planner estimate)</source>
        <translation>约 %L1 条记录匹配（规划器估计）</translation>
    </message>
    <message>
        <source>Not connected.</source>
        <translation>未连接。</translation>
    </message>
    <message>
        <source>The schema is newer than this console, or its migrations do not match: look, change nothing.</source>
        <translation>模式比此控制台新，或其迁移不匹配：只能查看，不做任何更改。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source> or </source>
        <translation> 或 </translation>
    </message>
    <message>
        <source>Oldest first seen first (unfinished)</source>
        <translation>最早出现的在前（未完成）</translation>
    </message>
    <message>
        <source>Newest first seen first (unfinished)</source>
        <translation>最近出现的在前（未完成）</translation>
    </message>
    <message>
        <source>about %1 records match: %2</source>
        <translation>约 %1 条记录匹配：%2</translation>
    </message>
    <message>
        <source>Pause intake… (this key names no tenant and operation)</source>
        <translation>暂停接收…（此键未指明租户和操作）</translation>
    </message>
    <message>
        <source>Requeue, release or mark failed every task these filters match (not only the loaded rows), as a recovery job the database runs.</source>
        <translation>将这些筛选条件匹配的每个任务（不只是已加载的行）重新入队、释放或标记为失败，作为由数据库运行的恢复作业。</translation>
    </message>
    <message numerus="yes">
        <source>Apply to all %Ln matching…</source>
        <translation>
            <numerusform>应用到全部 %Ln 个匹配项…</numerusform>
        </translation>
    </message>
    <message>
        <source>Apply to all matching…</source>
        <translation>应用到所有匹配项…</translation>
    </message>
    <message>
        <source>Any error class</source>
        <translation>任意错误类别</translation>
    </message>
    <message>
        <source>class %1</source>
        <translation>类别 %1</translation>
    </message>
    <message>
        <source>Lease running</source>
        <translation>租约仍有效</translation>
    </message>
    <message>
        <source>Retries exhausted</source>
        <translation>重试已用尽</translation>
    </message>
    <message>
        <source>Failed for a reason other than a permanent error: attempts or age ran out</source>
        <translation>因永久性错误以外的原因失败：尝试次数或时限已用尽</translation>
    </message>
    <message>
        <source>unfinished for: any</source>
        <translation>未完成时长：不限</translation>
    </message>
    <message>
        <source>unfinished ≥ </source>
        <translation>未完成 ≥ </translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Not succeeded, first seen at least this many minutes ago</source>
        <translation>尚未成功，且首次出现至少在这么多分钟之前</translation>
    </message>
    <message>
        <source>updated: any time</source>
        <translation>更新时间：不限</translation>
    </message>
    <message>
        <source>updated within </source>
        <translation>最近更新于 </translation>
    </message>
    <message>
        <source>Updated within the last this many minutes (minute buckets, as the tiles count)</source>
        <translation>在最近这么多分钟内更新过（按分钟桶计，与磁贴的统计方式相同）</translation>
    </message>
    <message>
        <source>error message contains…</source>
        <translation>错误信息包含…</translation>
    </message>
    <message>
        <source>Unfinished tasks whose last error message contains this text (literally, any case)</source>
        <translation>最后一条错误信息包含此文本的未完成任务（按字面匹配，不区分大小写）</translation>
    </message>
    <message>
        <source>Tasks a worker is on now. A task run in one transaction (claim, writes and success in one commit) has no row until it commits, and is not listed while it runs.</source>
        <translation>工作进程正在执行的任务。在一个事务中运行的任务（认领、写入和成功记录在一次提交中）在提交之前没有行，运行期间不会列出。</translation>
    </message>
    <message>
        <source>Apply to all matching: %1</source>
        <translation>应用到所有匹配项：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::TaskDetailLoader</name>
    <message>
        <source>Saved %1 bytes to %2</source>
        <translation>已将 %1 字节保存到 %2</translation>
    </message>
    <message>
        <source>Save cancelled; nothing written</source>
        <translation>保存已取消；未写入任何内容</translation>
    </message>
    <message>
        <source>Save failed: %1</source>
        <translation>保存失败：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::TaskDetailPane</name>
    <message>
        <source>%1 MB</source>
        <translation>%1 MB</translation>
    </message>
    <message>
        <source>%1 kB</source>
        <translation>%1 kB</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>Select a task to see its record.</source>
        <translation>选择一个任务以查看其记录。</translation>
    </message>
    <message>
        <source>Save full result…</source>
        <translation>保存完整结果…</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>At</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Could not read the task: %1</source>
        <translation>无法读取该任务：%1</translation>
    </message>
    <message>
        <source>Save full result</source>
        <translation>保存完整结果</translation>
    </message>
    <message>
        <source>JSON (*.json);;All files (*)</source>
        <translation>JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>Saving to %1…</source>
        <translation>正在保存到 %1…</translation>
    </message>
    <message>
        <source>The task is no longer in the table.</source>
        <translation>该任务已不在表中。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; task, updated %2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; 任务，更新于 %2</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Result: %1; showing the first %2 characters.</source>
        <translation>结果：%1；显示前 %2 个字符。</translation>
    </message>
    <message>
        <source>Result: %1.</source>
        <translation>结果：%1。</translation>
    </message>
    <message>
        <source>none (expired)</source>
        <translation>无（已过期）</translation>
    </message>
    <message>
        <source>%1 left</source>
        <translation>剩余 %1</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;%4&apos;&gt;%1 digest conflict(s)&lt;/span&gt;, last %2 with %3</source>
        <translation>&lt;span style=&apos;%4&apos;&gt;%1 次摘要冲突&lt;/span&gt;，最近一次于 %2，摘要 %3</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;%2&apos;&gt;expired %1 ago&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;%2&apos;&gt;%1 前已过期&lt;/span&gt;</translation>
    </message>
    <message>
        <source>none (not processing)</source>
        <translation>无（不在处理中）</translation>
    </message>
    <message>
        <source>Requested</source>
        <translation>请求时间</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Worker</source>
        <translation>工作进程</translation>
    </message>
    <message>
        <source>Tries</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>结束时间</translation>
    </message>
    <message>
        <source>Requested by</source>
        <translation>请求者</translation>
    </message>
    <message>
        <source>Detail</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Could not read its re-executions: %1</source>
        <translation>无法读取其重新执行：%1</translation>
    </message>
    <message>
        <source>Reading its re-executions…</source>
        <translation>正在读取其重新执行…</translation>
    </message>
    <message>
        <source>Re-execution</source>
        <translation>重新执行</translation>
    </message>
    <message>
        <source>%1, job %2</source>
        <translation>%1，作业 %2</translation>
    </message>
    <message>
        <source>Re-execution (%1, %2 open)</source>
        <translation>重新执行（%1，%2 个未结束）</translation>
    </message>
    <message>
        <source>Re-execution (%1)</source>
        <translation>重新执行（%1）</translation>
    </message>
</context>
<context>
    <name>idem::console::TaskRecordView</name>
    <message>
        <source>Action</source>
        <translation>动作</translation>
    </message>
    <message>
        <source>Actor</source>
        <translation>执行者</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Tenant / op / id</source>
        <translation>租户 / 操作 / ID</translation>
    </message>
    <message>
        <source>Digest</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Lease</source>
        <translation>租约</translation>
    </message>
    <message>
        <source>Owner token</source>
        <translation>所有者令牌</translation>
    </message>
    <message>
        <source>Next attempt</source>
        <translation>下次尝试</translation>
    </message>
    <message>
        <source>Created / updated</source>
        <translation>创建 / 更新</translation>
    </message>
    <message>
        <source>Error class</source>
        <translation>错误类别</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Error history</source>
        <translation>错误历史</translation>
    </message>
    <message>
        <source>Audit</source>
        <translation>审计</translation>
    </message>
    <message>
        <source>retryable_failed (uncertain outcome: retry only with the same key)</source>
        <translation>retryable_failed（结果不确定：只能用同一个键重试）</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1/%2</translation>
    </message>
    <message>
        <source>No result stored.</source>
        <translation>未存储结果。</translation>
    </message>
    <message>
        <source>Error history (%1)</source>
        <translation>错误历史（%1）</translation>
    </message>
    <message>
        <source>Audit (unreadable)</source>
        <translation>审计（无法读取）</translation>
    </message>
    <message>
        <source>Audit (%1)</source>
        <translation>审计（%1）</translation>
    </message>
</context>
<context>
    <name>idem::console::Tile</name>
    <message>
        <source>Processing</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>Expired leases</source>
        <translation>过期租约</translation>
    </message>
    <message>
        <source>Rows in processing whose lease ran out: the worker died or stalled; the next claim takes them over.</source>
        <translation>租约已到期的 processing 行：工作进程已崩溃或停滞；下一次认领会接管它们。</translation>
    </message>
    <message>
        <source>Duplicate ratio</source>
        <translation>重复率</translation>
    </message>
    <message>
        <source>Retries</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Failed retries</source>
        <translation>失败的重试</translation>
    </message>
    <message>
        <source>Long-unfinished</source>
        <translation>长期未完成</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Rows in failed: a permanent error, or attempts / age exhausted. Only an operator can requeue them.</source>
        <translation>failed 状态的行：永久错误，或尝试次数 / 时长已耗尽。只有操作员可以将其重新入队。</translation>
    </message>
    <message>
        <source>Digest conflicts</source>
        <translation>摘要冲突</translation>
    </message>
    <message>
        <source>Claims of a key with a different request digest in the window: a client reused a key for another request.</source>
        <translation>时间窗口内以不同请求摘要认领同一个键的次数：有客户端把一个键用在了另一个请求上。</translation>
    </message>
    <message>
        <source>Stale-token rejections</source>
        <translation>过期令牌拒绝</translation>
    </message>
    <message>
        <source>complete / fail / heartbeat by a worker that had lost the row (lease taken over) in the window: the fence at work.</source>
        <translation>时间窗口内已失去该行（租约被接管）的工作进程发出的 complete / fail / heartbeat：这是栅栏在起作用。</translation>
    </message>
    <message>
        <source>Uncertain outcomes</source>
        <translation>结果不确定</translation>
    </message>
    <message>
        <source>Retryable rows whose last attempt&apos;s effect is unknown (timeout after the request left); retried with the same key.</source>
        <translation>最后一次尝试效果未知（请求发出后超时）的可重试行；将用同一个键重试。</translation>
    </message>
    <message>
        <source>Oldest processing</source>
        <translation>最早的处理中任务</translation>
    </message>
    <message>
        <source>Age of the oldest row in processing, since it was first seen (created_at).</source>
        <translation>最早的 processing 行自首次出现（created_at）以来的时长。</translation>
    </message>
    <message>
        <source>Total rows</source>
        <translation>总行数</translation>
    </message>
    <message>
        <source>The planner&apos;s estimate of the table&apos;s rows (pg_class.reltuples), never a count.</source>
        <translation>规划器对表行数的估计（pg_class.reltuples），而非实际计数。</translation>
    </message>
    <message>
        <source>Waiting to retry</source>
        <translation>等待重试</translation>
    </message>
    <message>
        <source>Rows in retryable_failed now: an attempt failed and the task waits for its backoff to elapse and the next claim of its key.</source>
        <translation>当前处于 retryable_failed 的行：一次尝试失败，任务正等待退避时间结束以及其键的下一次认领。</translation>
    </message>
    <message>
        <source>Rows still in flight (processing or waiting to retry) and first seen longer ago than the long-unfinished limit. Failed rows have their own tile.</source>
        <translation>仍在进行中（处理中或等待重试）且首次出现早于长期未完成阈值的行。失败的行有单独的磁贴。</translation>
    </message>
    <message>
        <source>Claims that took a row over again (expired lease or elapsed backoff) in the window, from idem_counters.</source>
        <translation>时间窗口内再次接管某行的认领（租约过期或退避已结束），来自 idem_counters。</translation>
    </message>
    <message>
        <source>Attempts after the first (attempt 2 or later) that failed, whatever the error class, in the window, from idem_counters. A first attempt&apos;s failure is not counted. A click opens the keys with such a failure in their error history, whatever their status now: fewer keys than failures when a key failed more than once.</source>
        <translation>时间窗内首次之后（第 2 次或之后）失败的尝试，不论错误类别，取自 idem_counters。首次尝试的失败不计入。点击打开错误历史中有此类失败的键，不论其当前状态：同一键失败多次时，键数少于失败次数。</translation>
    </message>
    <message>
        <source>Claims answered from an existing key (replay, in progress, conflict) over the first claims of a key plus those, in the window, from idem_counters: a retry&apos;s claim of its own key is not counted.</source>
        <translation>时间窗口内由已有键应答的认领（重放、进行中、冲突）占“键的首次认领加上这些认领”的比例，取自 idem_counters：重试对自身键的认领不计入。</translation>
    </message>
    <message>
        <source>Rows in processing whose lease is still running: tasks a worker is on now. A task run in one transaction (claim, writes and success in one commit) shows nothing until it commits.</source>
        <translation>租约仍有效的 processing 行：工作进程正在执行的任务。在一个事务中运行的任务（认领、写入和成功记录在一次提交中）在提交之前不显示任何内容。</translation>
    </message>
    <message>
        <source>Reconcile</source>
        <translation>对账</translation>
    </message>
    <message>
        <source>Succeeded keys whose business effect the reconcile probes did not count exactly once (none, or two or more) in their last runs, over the keys those runs sampled: exact for those keys, as of the runs (idemctl reconcile).</source>
        <translation>对账探针最近一次运行中，业务效果未恰好计数一次（没有，或两个及以上）的已成功键，相对于这些运行抽查的键：对这些键精确，截至各次运行（idemctl reconcile）。</translation>
    </message>
    <message>
        <source>Worst p95 run time</source>
        <translation>最差 p95 运行时长</translation>
    </message>
    <message>
        <source>The operation whose 95th-percentile run time (claim to complete or fail, by the server&apos;s clock) is highest over the window&apos;s folded minutes. A minute is folded once it has been closed for a minute, so the figures end a minute or two before now.</source>
        <translation>在时间窗口内已汇总的分钟中，95 百分位运行时长（从认领到完成或失败，以服务器时钟为准）最高的操作。一分钟结束满一分钟后才会被汇总，因此数据比当前时间早一到两分钟结束。</translation>
    </message>
</context>
<context>
    <name>idem::console::TileConditionsBar</name>
    <message>
        <source>Remove these conditions: list exactly what the controls above say</source>
        <translation>移除这些条件：只按上方控件所示列出</translation>
    </message>
    <message>
        <source>a digest conflict in the last %1 min</source>
        <translation>最近 %1 分钟内有摘要冲突</translation>
    </message>
    <message>
        <source>a failure of attempt 2 or later in that window (from the error history)</source>
        <translation>该时间窗内第 2 次或之后的尝试失败（取自错误历史）</translation>
    </message>
    <message>
        <source>Also narrowed by the tile: %1</source>
        <translation>磁贴附加的筛选条件：%1</translation>
    </message>
</context>
<context>
    <name>idem::console::TileWidget</name>
    <message>
        <source>Click: opens %1.</source>
        <translation>点击：打开%1。</translation>
    </message>
    <message>
        <source>Click: opens nothing. %1</source>
        <translation>点击：不打开任何内容。%1</translation>
    </message>
</context>
<context>
    <name>idem::console::TrustedKeysDialog</name>
    <message>
        <source>&amp;Remove</source>
        <translation>移除(&amp;R)</translation>
    </message>
    <message>
        <source>Trusted signing keys</source>
        <translation>可信签名密钥</translation>
    </message>
    <message>
        <source>A snapshot&apos;s signature is shown as valid only when it was made by one of these keys. A bundle carries its signer&apos;s public key, so anyone who edits a bundle can re-sign it: trust a key only when you know whose it is (compare the fingerprint that &lt;tt&gt;idemctl snapshot keygen&lt;/tt&gt; printed).</source>
        <translation>只有由这些密钥之一做出的快照签名才显示为有效。快照包自带签名者的公钥，因此任何修改快照包的人都能重新签名：只有在确知密钥属于谁时才信任它（请核对 &lt;tt&gt;idemctl snapshot keygen&lt;/tt&gt; 打印的指纹）。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>SHA-256 fingerprint</source>
        <translation>SHA-256 指纹</translation>
    </message>
    <message>
        <source>&amp;Add public key file…</source>
        <translation>添加公钥文件(&amp;A)…</translation>
    </message>
    <message>
        <source>the key</source>
        <translation>该密钥</translation>
    </message>
    <message>
        <source>Not added: %1</source>
        <translation>未添加：%1</translation>
    </message>
    <message>
        <source>Not added: give one public key or one fingerprint.</source>
        <translation>未添加：请给出一个公钥或一个指纹。</translation>
    </message>
    <message>
        <source>Public key to trust</source>
        <translation>要信任的公钥</translation>
    </message>
    <message>
        <source>PEM public keys (*.pem *.pub);;All files (*)</source>
        <translation>PEM 公钥 (*.pem *.pub);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Not added: %1 cannot be read.</source>
        <translation>未添加：无法读取 %1。</translation>
    </message>
    <message>
        <source>Name the key</source>
        <translation>为密钥命名</translation>
    </message>
    <message>
        <source>Whose key is this?</source>
        <translation>这是谁的密钥？</translation>
    </message>
    <message>
        <source>Trust this signer</source>
        <translation>信任此签名者</translation>
    </message>
    <message>
        <source>Trust the key %1 only if you know whose it is. Name:</source>
        <translation>只有在确知密钥 %1 属于谁时才信任它。名称：</translation>
    </message>
</context>
<context>
    <name>idem::console::ViewLink</name>
    <message>
        <source>The link is %1 characters long; a console link is at most %2.</source>
        <translation>该链接长 %1 个字符；控制台链接最多 %2 个字符。</translation>
    </message>
    <message>
        <source>The link has spaces or control characters: it is not a console link.</source>
        <translation>该链接含有空格或控制字符：不是控制台链接。</translation>
    </message>
    <message>
        <source>Not a console link: it must start with idem://view?</source>
        <translation>不是控制台链接：必须以 idem://view? 开头</translation>
    </message>
    <message>
        <source>Not a console link: it must start with idem://view? and carry nothing else before the &apos;?&apos;.</source>
        <translation>不是控制台链接：必须以 idem://view? 开头，且“?”之前不能有其他内容。</translation>
    </message>
    <message>
        <source>The link&apos;s %1 is not valid UTF-8.</source>
        <translation>链接中的 %1 不是有效的 UTF-8。</translation>
    </message>
    <message>
        <source>The link names %1 twice.</source>
        <translation>链接两次给出了 %1。</translation>
    </message>
    <message>
        <source>The link&apos;s %1 is too long or has control characters.</source>
        <translation>链接中的 %1 过长或含有控制字符。</translation>
    </message>
    <message>
        <source>The link&apos;s profile name is empty or longer than %1 characters.</source>
        <translation>链接中的配置名称为空或超过 %1 个字符。</translation>
    </message>
    <message>
        <source>The link names no page this console has (%1): %2.</source>
        <translation>链接指定的页面不在本控制台中（%1）：%2。</translation>
    </message>
    <message>
        <source>The link&apos;s window must be 1 to %1 minutes.</source>
        <translation>链接中的时间窗口必须为 1 到 %1 分钟。</translation>
    </message>
    <message>
        <source>The link&apos;s %1 is empty or has &apos;:&apos;.</source>
        <translation>链接中的 %1 为空或含有“:”。</translation>
    </message>
    <message>
        <source>The link&apos;s Tasks filter is not one this console accepts: %1</source>
        <translation>本控制台不接受链接中的任务筛选条件：%1</translation>
    </message>
    <message>
        <source>The link carries %1, which a console link never does.</source>
        <translation>链接带有 %1，控制台链接从不携带此项。</translation>
    </message>
    <message>
        <source>The link names no profile.</source>
        <translation>链接未指定连接配置。</translation>
    </message>
    <message>
        <source>The link names no page.</source>
        <translation>链接未指定页面。</translation>
    </message>
</context>
</TS>
