-- audit_check_reason (schema v9; the history is in git log).
-- Reason and actor of every audited change (recovery actions, retention, purge runs): a reason
-- needs a visible character (audit_reason_blank) and at most 16384 characters, an actor at most 256.
CREATE OR REPLACE FUNCTION audit_check_reason(p_reason text, p_actor text)
RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_reason IS NULL OR audit_reason_blank(p_reason) THEN
        RAISE EXCEPTION 'a reason is required: it needs a visible character, not only white space or invisible'
                        ' characters' USING ERRCODE = 'ID003';
    END IF;
    IF char_length(p_reason) > 16384 THEN
        RAISE EXCEPTION 'the reason is % characters, more than the 16384 allowed', char_length(p_reason)
            USING ERRCODE = 'ID003';
    END IF;
    IF char_length(btrim(COALESCE(p_actor, ''))) > 256 THEN
        RAISE EXCEPTION 'the actor name is longer than 256 characters' USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION audit_check_reason(text, text) FROM PUBLIC;
