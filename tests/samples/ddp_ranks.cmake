# tests/samples/ddp_ranks.cmake — cmake -DMPIRUN="mpirun;-np;2;..." -DSAMPLE=train_ddp -DGLASSBOX=glassbox -DOUT=dir
#   -DSTRAGGLER=1|-1 [-DPOISON=1] -P ddp_ranks.cmake
# Runs train_ddp traced on 2 ranks (rank STRAGGLER sleeping 15 ms per step, or none), merges the ranks' traces, checks
# the merged trace, and reads `glassbox report`: the straggler must be named (and only then), and the program's
# barriers must overlap on every rank on the merged clock (a barrier releases every rank at one moment, so each rank's
# span of it holds that moment; a misaligned clock shows as a gap). CTest runs it alone (RUN_SERIAL): timing.
foreach(var MPIRUN SAMPLE GLASSBOX OUT STRAGGLER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ddp_ranks.cmake: pass -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
function(run)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${text}\n${err}")
  endif()
  set(text "${text}" PARENT_SCOPE)
endfunction()

if(DEFINED POISON)  # rank POISON's batch holds a NaN at step 3: the report must say the non-finite values began there
  set(extra --epochs 1 --poison ${POISON} --poison-step 3)
else()
  set(extra --epochs 4)
endif()
run(${CMAKE_COMMAND} -E env GLASSBOX_TRACE=${OUT}/ddp.db GLASSBOX_NUM_THREADS=1 ${MPIRUN} ${SAMPLE} ${extra}
    --straggler ${STRAGGLER} --straggler-ms 15)
run(${GLASSBOX} merge ${OUT}/ddp.rank0.db ${OUT}/ddp.rank1.db -o ${OUT}/ddp.db)
message(STATUS "${text}")
if(NOT text MATCHES "rank 1: [^\n]*, clock_sync start and end")
  message(FATAL_ERROR "rank 1 was not aligned by both clock handshakes:\n${text}")
endif()
run(${GLASSBOX} check ${OUT}/ddp.db)
run(${GLASSBOX} report ${OUT}/ddp.db --limit 3)
string(REGEX MATCH "ranks: [^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\n" ranks "${text}")
message(STATUS "${ranks}")

if(DEFINED POISON)
  if(NOT text MATCHES "first non-finite value: [^\n]*, step 3, on rank ${POISON}\n")
    message(FATAL_ERROR "the report does not say the non-finite values began on rank ${POISON}:\n${text}")
  endif()
  if(NOT text MATCHES "came back from DistributedDataParallel's all-reduce")  # rank 0: not blamed on its backward
    message(FATAL_ERROR "the report does not say rank 0's NaN came through the all-reduce:\n${text}")
  endif()
  return()
endif()
if(NOT text MATCHES "^healthy: closed cleanly, no anomalies")  # no detector cries wolf on any rank
  message(FATAL_ERROR "the merged trace of a run without a fault has alarms:\n${text}")
endif()
if(STRAGGLER GREATER_EQUAL 0)
  if(NOT text MATCHES "straggler: rank ${STRAGGLER}: it arrived last")
    message(FATAL_ERROR "the report does not name rank ${STRAGGLER} as the straggler:\n${text}")
  endif()
else()
  if(text MATCHES "straggler: rank" OR NOT text MATCHES "no straggler")
    message(FATAL_ERROR "the report names a straggler in a healthy run:\n${text}")
  endif()
endif()

if(NOT text MATCHES "the program's [0-9]+ barriers? overlap on every rank")
  message(FATAL_ERROR "the program's barriers do not overlap on every rank on the merged clock:\n${text}")
endif()
