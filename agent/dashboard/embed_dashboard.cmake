# Writes OUTPUT: a C++ file holding every file in INPUTS ("|"-separated) as
# bytes, by file name (see dashboard_assets.h). Bytes rather than a raw
# string literal, so no character in the JavaScript can end the literal.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(arrays "")
set(table "")
set(index 0)
foreach(f ${INPUTS})
  get_filename_component(name ${f} NAME)
  file(READ ${f} hex HEX)
  string(LENGTH "${hex}" hex_length)
  if(hex_length EQUAL 0)
    message(FATAL_ERROR "${f} is empty")
  endif()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # 32 bytes a line keeps the generated file readable for a diff.
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" bytes "${bytes}")
  set(arrays "${arrays}const unsigned char kAsset${index}[] = {\n${bytes}};\n\n")
  set(table "${table}      {\"${name}\", {reinterpret_cast<const char*>(kAsset${index}), sizeof kAsset${index}}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE ${OUTPUT}.tmp
  "// Generated from agent/dashboard/ by embed_dashboard.cmake. Do not edit.\n"
  "#include \"agent/dashboard/dashboard_assets.h\"\n\n"
  "namespace ff::dashboard {\n\nnamespace {\n\n${arrays}}  // namespace\n\n"
  "const std::vector<Asset>& assets() {\n"
  "  static const std::vector<Asset> all = {\n${table}  };\n"
  "  return all;\n}\n\n}  // namespace ff::dashboard\n")
# Unchanged bytes keep the old file's time, so nothing recompiles.
configure_file(${OUTPUT}.tmp ${OUTPUT} COPYONLY)
file(REMOVE ${OUTPUT}.tmp)
