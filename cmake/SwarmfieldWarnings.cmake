# Warnings are errors on our own code only (not on third-party headers, which come in as SYSTEM).
function(swarmfield_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion-null
                         $<$<BOOL:${SWARMFIELD_WERROR}>:-Werror>)
  if(SWARMFIELD_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
