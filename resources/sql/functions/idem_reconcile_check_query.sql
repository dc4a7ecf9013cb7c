-- idem_reconcile_check_query (schema v30; the history is in git log).
-- The text of a reconcile probe's query: 1 to 4000 characters, one SELECT (or WITH ... SELECT)
-- statement, at most one ';' and only at its end, that names the business id as $1 and no other
-- parameter. The runner enforces the rest each time it runs it (a READ ONLY transaction, a
-- statement timeout, role idem_reconcile, exactly one row of one integer column). ID003 otherwise.
CREATE OR REPLACE FUNCTION idem_reconcile_check_query(p_query text)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
DECLARE
    v_query text := btrim(p_query, E' \t\r\n');
BEGIN
    IF p_query IS NULL OR v_query = '' THEN
        RAISE EXCEPTION 'a probe needs a query that counts the effects of one business id ($1), not %',
            CASE WHEN p_query IS NULL THEN 'NULL' ELSE 'only white space' END USING ERRCODE = 'ID003';
    END IF;
    IF char_length(p_query) > 4000 THEN
        RAISE EXCEPTION 'the probe''s query is % characters, more than the 4000 allowed', char_length(p_query)
            USING ERRCODE = 'ID003';
    END IF;
    IF p_query ~ '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' THEN
        RAISE EXCEPTION 'the probe''s query holds a control character' USING ERRCODE = 'ID003';
    END IF;
    v_query := rtrim(rtrim(v_query, ';'), E' \t\r\n');
    IF strpos(v_query, ';') > 0 THEN
        RAISE EXCEPTION 'the probe''s query must be one statement: it holds a '';'' before its end'
            USING ERRCODE = 'ID003';
    END IF;
    IF v_query !~* '^(select|with)\M' THEN
        RAISE EXCEPTION 'the probe''s query must be a SELECT (or WITH ... SELECT) that returns one count, not %',
            quote_literal(left(v_query, 40)) USING ERRCODE = 'ID003';
    END IF;
    IF v_query !~ '\$1(?![0-9])' THEN
        RAISE EXCEPTION 'the probe''s query must name the business id as $1 (it is bound, never written into the text)'
            USING ERRCODE = 'ID003';
    END IF;
    IF v_query ~ '\$([2-9]|1[0-9])' THEN
        RAISE EXCEPTION 'the probe''s query may use only $1, the business id' USING ERRCODE = 'ID003';
    END IF;
    RETURN v_query;
END
$check$;

REVOKE ALL ON FUNCTION idem_reconcile_check_query(text) FROM PUBLIC;
