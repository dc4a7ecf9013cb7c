<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>idem::console::ActionDialog</name>
    <message numerus="yes">
        <source>&lt;p&gt;&lt;b&gt;%1 %n record(s).&lt;/b&gt; Each %2&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;%1 %n record.&lt;/b&gt; Each %2&lt;/p&gt;</numerusform>
            <numerusform>&lt;p&gt;&lt;b&gt;%1 %n records.&lt;/b&gt; Each %2&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>&lt;p style=&apos;margin-bottom:0&apos;&gt;&lt;b&gt;%1&lt;/b&gt;: %n record(s)&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p style=&apos;margin-bottom:0&apos;&gt;&lt;b&gt;%1&lt;/b&gt;: %n record&lt;/p&gt;</numerusform>
            <numerusform>&lt;p style=&apos;margin-bottom:0&apos;&gt;&lt;b&gt;%1&lt;/b&gt;: %n records&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 %n record(s)</source>
        <translation>
            <numerusform>%1 %n record</numerusform>
            <numerusform>%1 %n records</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>&lt;p&gt;&lt;b&gt;Re-executed now: %n record(s).&lt;/b&gt; Each gets a re-drive item that a re-driver of its operation takes, running the stored request through the ordinary claim with the same key (one effect, even if its client retries too).</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;Re-executed now: %n record.&lt;/b&gt; It gets a re-drive item that a re-driver of its operation takes, running the stored request through the ordinary claim with the same key (one effect, even if its client retries too).</numerusform>
            <numerusform>&lt;p&gt;&lt;b&gt;Re-executed now: %n records.&lt;/b&gt; Each gets a re-drive item that a re-driver of its operation takes, running the stored request through the ordinary claim with the same key (one effect, even if its client retries too).</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n record(s) requeued only: no re-driver of their operation is online, they wait for their clients.</source>
        <translation>
            <numerusform>%n record requeued only: no re-driver of its operation is online, it waits for its client.</numerusform>
            <numerusform>%n records requeued only: no re-driver of their operation is online, they wait for their clients.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::ChartPanel</name>
    <message numerus="yes">
        <source>%n more event(s) in this window not marked: each kind (operators&apos; actions, deploys, failovers) marks its newest %1. Narrow the window to see them.</source>
        <translation>
            <numerusform>%n more event in this window not marked: each kind (operators&apos; actions, deploys, failovers) marks its newest %1. Narrow the window to see it.</numerusform>
            <numerusform>%n more events in this window not marked: each kind (operators&apos; actions, deploys, failovers) marks its newest %1. Narrow the window to see them.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::ClusterPanel</name>
    <message numerus="yes">
        <source>%n member(s), leader %1; read %2 from %3</source>
        <translation>
            <numerusform>%n member, leader %1; read %2 from %3</numerusform>
            <numerusform>%n members, leader %1; read %2 from %3</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n member(s) and no leader: a failover is under way or the cluster cannot elect one; read %1 from %2</source>
        <translation>
            <numerusform>%n member and no leader: a failover is under way or the cluster cannot elect one; read %1 from %2</numerusform>
            <numerusform>%n members and no leader: a failover is under way or the cluster cannot elect one; read %1 from %2</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::DashboardModel</name>
    <message numerus="yes">
        <source>%n operations</source>
        <translation>
            <numerusform>%n operation</numerusform>
            <numerusform>%n operations</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n probes</source>
        <translation>
            <numerusform>%n probe</numerusform>
            <numerusform>%n probes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n keys not checked (query failed)</source>
        <translation>
            <numerusform>%n key not checked (query failed)</numerusform>
            <numerusform>%n keys not checked (query failed)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::EventMarks</name>
    <message numerus="yes">
        <source>… and %n more</source>
        <translation>
            <numerusform>… and %n more</numerusform>
            <numerusform>… and %n more</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n event(s)</source>
        <translation>
            <numerusform>%n event</numerusform>
            <numerusform>%n events</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::ExportDialog</name>
    <message numerus="yes">
        <source>last %n minute(s)</source>
        <translation>
            <numerusform>last %n minute</numerusform>
            <numerusform>last %n minutes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>last %n hour(s)</source>
        <translation>
            <numerusform>last %n hour</numerusform>
            <numerusform>last %n hours</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::IntegrityNotice</name>
    <message numerus="yes">
        <source>⚠ %n counter flush(es) refused as implausible in the last 24 h; the last at %1 by role %2 (application %3, from %4): %5</source>
        <translation>
            <numerusform>⚠ %n counter flush refused as implausible in the last 24 h; the last at %1 by role %2 (application %3, from %4): %5</numerusform>
            <numerusform>⚠ %n counter flushes refused as implausible in the last 24 h; the last at %1 by role %2 (application %3, from %4): %5</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::JobsWidget</name>
    <message numerus="yes">
        <source>%n refused row(s) written to %1</source>
        <translation>
            <numerusform>%n refused row written to %1</numerusform>
            <numerusform>%n refused rows written to %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n job(s), read every %1 s.</source>
        <translation>
            <numerusform>%n job, read every %1 s.</numerusform>
            <numerusform>%n jobs, read every %1 s.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::LatencyWatch</name>
    <message numerus="yes">
        <source>%1: %2 (%Ln runs)</source>
        <translation>
            <numerusform>%1: %2 (%Ln run)</numerusform>
            <numerusform>%1: %2 (%Ln runs)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>… and %n more</source>
        <translation>
            <numerusform>… and %n more</numerusform>
            <numerusform>… and %n more</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::PauseBanner</name>
    <message numerus="yes">
        <source>and %n more pause(s)</source>
        <translation>
            <numerusform>and %n more pause</numerusform>
            <numerusform>and %n more pauses</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::RedriveWatch</name>
    <message numerus="yes">
        <source>%n worker(s) of %1 are online</source>
        <translation>
            <numerusform>%n worker of %1 is online</numerusform>
            <numerusform>%n workers of %1 are online</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n byte(s)</source>
        <translation>
            <numerusform>%n byte</numerusform>
            <numerusform>%n bytes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::ServerInfo</name>
    <message numerus="yes">
        <source>%n standby(s) this role may not look into (grant pg_monitor or pg_read_all_stats)</source>
        <translation>
            <numerusform>%n standby this role may not look into (grant pg_monitor or pg_read_all_stats)</numerusform>
            <numerusform>%n standbys this role may not look into (grant pg_monitor or pg_read_all_stats)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::SnapshotExportFlow</name>
    <message numerus="yes">
        <source>One consistent read of %1 (%2, %3; figures over the dashboard&apos;s last %n minute(s)), read-only through the monitor connection.</source>
        <translation>
            <numerusform>One consistent read of %1 (%2, %3; figures over the dashboard&apos;s last minute), read-only through the monitor connection.</numerusform>
            <numerusform>One consistent read of %1 (%2, %3; figures over the dashboard&apos;s last %n minutes), read-only through the monitor connection.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::StatusPanel</name>
    <message numerus="yes">
        <source>%n standby(s) whose lag this role may not read (grant pg_monitor)</source>
        <translation>
            <numerusform>%n standby whose lag this role may not read (grant pg_monitor)</numerusform>
            <numerusform>%n standbys whose lag this role may not read (grant pg_monitor)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n success(es) acknowledged in the last %1 of lag are not on %2 yet</source>
        <translation>
            <numerusform>%n success acknowledged in the last %1 of lag is not on %2 yet</numerusform>
            <numerusform>%n successes acknowledged in the last %1 of lag are not on %2 yet</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln acknowledged success(es)</source>
        <translation>
            <numerusform>%Ln acknowledged success</numerusform>
            <numerusform>%Ln acknowledged successes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::StorageWidget</name>
    <message numerus="yes">
        <source>%n sample(s), at most one every %1</source>
        <translation>
            <numerusform>%n sample, at most one every %1</numerusform>
            <numerusform>%n samples, at most one every %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>idem::console::TaskBrowserWidget</name>
    <message numerus="yes">
        <source>%Ln record(s) match</source>
        <translation>
            <numerusform>%Ln record matches</numerusform>
            <numerusform>%Ln records match</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Apply to all %Ln matching…</source>
        <translation>
            <numerusform>Apply to all %Ln matching…</numerusform>
            <numerusform>Apply to all %Ln matching…</numerusform>
        </translation>
    </message>
</context>
</TS>
