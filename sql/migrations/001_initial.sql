-- Placeholder until the store work writes the schema (issue 3).
CREATE TABLE IF NOT EXISTS placeholder (x INTEGER);
