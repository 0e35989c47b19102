# tests/samples/wait_share_falls.cmake — cmake -DGLASSBOX=... -DFEW=a.db -DMANY=b.db -P wait_share_falls.cmake
# Reads the data-loader wait share `glassbox report` computes from each trace ("waiting for data took X% of step
# time") and fails unless the run with fewer workers (FEW) waited a larger share than the one with more (MANY).
foreach(var GLASSBOX FEW MANY)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "wait_share_falls.cmake: pass -D${var}=...")
  endif()
endforeach()

function(wait_share db out)
  execute_process(COMMAND ${GLASSBOX} report ${db} --limit 1 OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "glassbox report ${db} failed (${rc}):\n${text}")
  endif()
  if(NOT text MATCHES "waiting for data took ([0-9.]+)% of step time")
    message(FATAL_ERROR "glassbox report ${db} has no data-loader wait share:\n${text}")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

wait_share(${FEW} few)
wait_share(${MANY} many)
message(STATUS "wait share: ${few}% (${FEW}) -> ${many}% (${MANY})")
if(NOT few GREATER many)
  message(FATAL_ERROR "the wait share did not fall with more workers: ${few}% -> ${many}%")
endif()
