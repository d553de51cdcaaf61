# Writes OUTPUT: a C++ file holding every migration in INPUTS ("|"-separated,
# sorted by name) as {version, name, text}. Owned by the store work; see sql/README.md.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "// Generated from sql/migrations/*.sql by sql/embed_sql.cmake. Do not edit.\n#include \"sql/sql_migrations.h\"\n\nnamespace ff::sql {\n\nconst std::vector<Migration>& migrations() {\n  static const std::vector<Migration> all = {\n")
foreach(f ${INPUTS})
  get_filename_component(name ${f} NAME)
  string(REGEX MATCH "^[0-9]+" version "${name}")
  math(EXPR version "${version}")
  file(READ ${f} text)
  set(body "${body}    {${version}, \"${name}\", R\"ffsql(${text})ffsql\"},\n")
endforeach()
set(body "${body}  };\n  return all;\n}\n\n}  // namespace ff::sql\n")
file(WRITE ${OUTPUT} "${body}")
