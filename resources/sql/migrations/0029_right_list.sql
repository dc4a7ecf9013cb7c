-- Idem schema v29: the rights from one list (issue 44 item 5). idem_right_list(), in
-- functions/idem_right_list.sql, names every right, the role that grants it, whether
-- idem_operator holds it and what it allows; roles.sql, idem_right_role and idem_rights() read it.
-- idem_rights() gains the description column: a changed result type that CREATE OR REPLACE cannot
-- make, so the old one goes here and functions/idem_rights.sql creates it again in the same
-- transaction (roles.sql grants it again).
DROP FUNCTION IF EXISTS idem_rights();
