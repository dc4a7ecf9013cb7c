-- idem_approver_check (schema v22; the history is in git log).
-- The second-person rule of every approval (idem_approval_approve), its one
-- definition: the approving login (session_user) is not p_requester, the login that asked, and
-- neither is a member of the other (either could SET ROLE to the other; a superuser is a member
-- of every role, so it neither approves nor is approved). p_what names what is approved, for the
-- refusal ("job 7", "change request 3"). Raises ID004 in words (v28; ID003 before); a NULL requester (nothing
-- recorded who asked) is refused too: an approval always has a second person to compare with.
CREATE OR REPLACE FUNCTION idem_approver_check(p_what text, p_requester text)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_requester IS NULL THEN
        RAISE EXCEPTION '% records no login that requested it: it cannot be approved', p_what USING ERRCODE = 'ID004';
    END IF;
    IF session_user::text = p_requester
       OR (EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = p_requester)
           AND (pg_catalog.pg_has_role(session_user, p_requester::name, 'MEMBER')
                OR pg_catalog.pg_has_role(p_requester::name, session_user, 'MEMBER'))) THEN
        RAISE EXCEPTION '%', format('login %s cannot approve %s: it was requested by login %s%s', session_user, p_what,
                        p_requester, CASE WHEN session_user::text = p_requester THEN ''
                                          ELSE ', and one of the two may act as the other (a member of it, or a superuser)' END)
            USING ERRCODE = 'ID004', HINT = 'A second person approves: another login with the approve right.';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_approver_check(text, text) FROM PUBLIC;
