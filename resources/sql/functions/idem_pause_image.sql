-- idem_pause_image (schema v15; the history is in git log).
-- A pause as its audit entries record it (null for none): reason, who, since, until.
CREATE OR REPLACE FUNCTION idem_pause_image(p idem_pauses)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT CASE WHEN p.tenant IS NULL THEN 'null'::jsonb
                ELSE jsonb_build_object('reason', p.reason, 'paused_by', p.paused_by, 'paused_at', p.paused_at,
                                        'changed_at', p.changed_at, 'until', p.until) END
$$;

REVOKE ALL ON FUNCTION idem_pause_image(idem_pauses) FROM PUBLIC;
