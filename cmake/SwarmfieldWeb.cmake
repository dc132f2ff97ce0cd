# The browser spectator's page (web/): built by web/build.sh (npm ci when its lock changed,
# flatc's TypeScript of the schema, an esbuild bundle) into ${CMAKE_BINARY_DIR}/web, where the
# server looks for it (--web-root's default: 'web' beside bin/). Needs node and npm; without
# them the page is not built (a notice here) and --web-port says how to get it.
option(SWARMFIELD_BUILD_WEB "Build the browser spectator's page (needs node and npm)" ON)
set(SWARMFIELD_WEB_DIR "${CMAKE_BINARY_DIR}/web")
if(SWARMFIELD_BUILD_WEB)
  find_program(SWARMFIELD_NODE node)
  find_program(SWARMFIELD_NPM npm)
  if(NOT SWARMFIELD_NODE OR NOT SWARMFIELD_NPM)
    message(STATUS "swarmfield: node/npm not found: the browser page is not built (SWARMFIELD_BUILD_WEB)")
    set(SWARMFIELD_BUILD_WEB OFF)
  endif()
endif()
if(SWARMFIELD_BUILD_WEB)
  file(GLOB_RECURSE _web_sources CONFIGURE_DEPENDS
       ${CMAKE_SOURCE_DIR}/web/src/*.js ${CMAKE_SOURCE_DIR}/web/src/*.mjs ${CMAKE_SOURCE_DIR}/web/src/*.ts
       ${CMAKE_SOURCE_DIR}/web/*.html ${CMAKE_SOURCE_DIR}/web/*.css)
  add_custom_command(
    OUTPUT ${SWARMFIELD_WEB_DIR}/index.html ${SWARMFIELD_WEB_DIR}/app.js
    COMMAND ${CMAKE_SOURCE_DIR}/web/build.sh ${SWARMFIELD_WEB_DIR}
    DEPENDS ${_web_sources} ${CMAKE_SOURCE_DIR}/web/build.sh ${CMAKE_SOURCE_DIR}/web/package.json
            ${CMAKE_SOURCE_DIR}/web/package-lock.json ${CMAKE_SOURCE_DIR}/protocol/schema/swarmfield.fbs
    COMMENT "Building the browser spectator's page (web/build.sh)"
    VERBATIM)
  add_custom_target(swarmfield_web ALL DEPENDS ${SWARMFIELD_WEB_DIR}/index.html ${SWARMFIELD_WEB_DIR}/app.js)
endif()
