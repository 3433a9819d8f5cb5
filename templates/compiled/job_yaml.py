from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'job.yaml.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_workload = resolve('workload')
    l_0_job = resolve('job')
    l_0_runtime = resolve('runtime')
    l_0_pod = resolve('pod')
    try:
        t_1 = environment.filters['indent']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'indent' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield 'apiVersion: batch/v1\nkind: Job\nmetadata: '
    yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='workload') if l_0_workload is missing else l_0_workload), 'metadata')))
    yield '\nspec:\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'backoff_limit'))):
        pass
        yield '  backoffLimit: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'backoff_limit')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'backoff_limit_per_index'))):
        pass
        yield '  backoffLimitPerIndex: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'backoff_limit_per_index')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'max_failed_indexes'))):
        pass
        yield '  maxFailedIndexes: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'max_failed_indexes')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'ttl_seconds_after_finished'))):
        pass
        yield '  ttlSecondsAfterFinished: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'ttl_seconds_after_finished')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'parallelism'))):
        pass
        yield '  parallelism: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'parallelism')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'completions'))):
        pass
        yield '  completions: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'completions')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'completion_mode'))):
        pass
        yield '  completionMode: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'completion_mode')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'active_deadline_seconds'))):
        pass
        yield '  activeDeadlineSeconds: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'active_deadline_seconds')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'pod_replacement_policy'))):
        pass
        yield '  podReplacementPolicy: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'pod_replacement_policy')))
        yield '\n'
    yield '  podFailurePolicy:\n    rules:\n      - action: Ignore\n        onPodConditions:\n          - type: '
    yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'disruption_condition')))
    yield '\n            status: "True"\n'
    if environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'exit_code_fallback'):
        pass
        yield '      - action: Ignore\n        onExitCodes:\n          containerName: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'name')))
        yield '\n          operator: In\n          values: ['
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'handler_exit_code')))
        yield ']\n'
        if environment.getattr((undefined(name='job') if l_0_job is missing else l_0_job), 'empty_pod_conditions'):
            pass
            yield '        onPodConditions: []\n'
    yield '  template:\n'
    t_3 = []
    pass
    template = environment.get_template('pod.yaml.j2', 'job.yaml.j2')
    gen = template.root_render_func(template.new_context(context.get_all(), True, {}))
    try:
        for event in gen:
            t_3.append(event)
    finally: gen.close()
    yield t_1(concat(t_3), 4, first=True)

blocks = {}
debug_info = '7=28&9=30&10=33&12=35&13=38&15=40&16=43&18=45&19=48&21=50&22=53&24=55&25=58&27=60&28=63&30=65&31=68&33=70&34=73&40=76&42=78&45=81&47=83&48=85&54=91&53=97'


# Generated by `python -m pmanifest.generate` from pmanifest/templates/job.yaml.j2: do not edit.
JINJA2_VERSION = '3.1.6'
SOURCE_FINGERPRINT = '1930:c9a367f7'
