-- idem_check_worker_text (schema v25; the history is in git log).
-- A worker name or version that a worker (idem_report_version) or a re-driver (idem_redriver_seen,
-- idem_redrive_take, idem_redrive_finish) reports; p_what says which, for the message: 1 to 200
-- characters, a visible one among them, no leading or trailing space, no control or format
-- character. ID003 otherwise.
CREATE OR REPLACE FUNCTION idem_check_worker_text(p_what text, p_value text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_value IS NULL OR char_length(p_value) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'a % must be 1 to 200 characters, not %', p_what,
            COALESCE(char_length(p_value)::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_value ~ (E'[\\u0001-\\u001F\\u007F-\\u009F\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890-\\u0891'
                  || E'\\u08E2\\u180E\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uFEFF'
                  || E'\\uFFF9-\\uFFFB\\U000110BD\\U000110CD\\U00013430-\\U0001343F\\U0001BCA0-\\U0001BCA3'
                  || E'\\U0001D173-\\U0001D17A\\U000E0001\\U000E0020-\\U000E007F]') THEN
        RAISE EXCEPTION 'a % must not hold a control or format character', p_what USING ERRCODE = 'ID003';
    END IF;
    IF p_value LIKE ' %' OR p_value LIKE '% ' OR audit_reason_blank(p_value) THEN
        RAISE EXCEPTION 'a % needs a visible character and no leading or trailing space', p_what
            USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_check_worker_text(text, text) FROM PUBLIC;
