from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'pod.yaml.j2'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_workload = resolve('workload')
    l_0_runtime = resolve('runtime')
    l_0_pod = resolve('pod')
    try:
        t_1 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield 'metadata:\n  labels: '
    yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='workload') if l_0_workload is missing else l_0_workload), 'labels')))
    yield '\n'
    if environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'pod_annotations'):
        pass
        yield '  annotations: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'pod_annotations')))
        yield '\n'
    yield 'spec:\n'
    if t_1(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'restart_policy')):
        pass
        if (not t_2(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'restart_policy'))):
            pass
            yield '  restartPolicy: '
            yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'restart_policy')))
            yield '\n'
    elif (environment.getattr((undefined(name='workload') if l_0_workload is missing else l_0_workload), 'role') == 'worker'):
        pass
        yield '  restartPolicy: Never\n'
    if (not t_2(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'grace_period_seconds'))):
        pass
        yield '  terminationGracePeriodSeconds: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'grace_period_seconds')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'priority_class_name'))):
        pass
        yield '  priorityClassName: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'priority_class_name')))
        yield '\n'
    if (not t_2(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'service_account_name'))):
        pass
        yield '  serviceAccountName: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'service_account_name')))
        yield '\n'
    if (t_1(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'subdomain')) and (not t_2(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'subdomain')))):
        pass
        yield '  subdomain: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'subdomain')))
        yield '\n'
    if environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'node_selector'):
        pass
        yield '  nodeSelector: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'node_selector')))
        yield '\n'
    if environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'required_affinity'):
        pass
        yield '  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n          - matchExpressions:\n              - '
        yield str(environment.finalize(context.eval_ctx, environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'required_affinity')))
        yield '\n'
    if environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'tolerations'):
        pass
        yield '  tolerations:\n'
        for l_1_toleration in environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'tolerations'):
            _loop_vars = {}
            pass
            yield '    - '
            yield str(environment.finalize(context.eval_ctx, l_1_toleration))
            yield '\n'
        l_1_toleration = missing
    if (t_1(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'topology_spread')) and environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'topology_spread')):
        pass
        yield '  topologySpreadConstraints:\n'
        for l_1_constraint in environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'topology_spread'):
            _loop_vars = {}
            pass
            yield '    - '
            yield str(environment.finalize(context.eval_ctx, l_1_constraint))
            yield '\n'
        l_1_constraint = missing
    yield '  containers:\n    - name: '
    yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'name')))
    yield '\n      image: '
    yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'image')))
    yield '\n'
    if (not t_2(environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'command'))):
        pass
        yield '      command: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'command')))
        yield '\n'
    if (not t_2(environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'args'))):
        pass
        yield '      args: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'args')))
        yield '\n'
    if environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'env'):
        pass
        yield '      env:\n'
        for l_1_var in environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'env'):
            _loop_vars = {}
            pass
            yield '        - '
            yield str(environment.finalize(context.eval_ctx, l_1_var))
            yield '\n'
        l_1_var = missing
    if environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'env_from'):
        pass
        yield '      envFrom:\n'
        for l_1_source in environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'env_from'):
            _loop_vars = {}
            pass
            yield '        - '
            yield str(environment.finalize(context.eval_ctx, l_1_source))
            yield '\n'
        l_1_source = missing
    if environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'ports'):
        pass
        yield '      ports:\n'
        for l_1_port in environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'ports'):
            _loop_vars = {}
            pass
            yield '        - {name: '
            yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_port, 'name')))
            yield ', containerPort: '
            yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_port, 'containerPort')))
            yield ', protocol: TCP}\n'
        l_1_port = missing
    if environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'resources'):
        pass
        yield '      resources: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'resources')))
        yield '\n'
    for (l_1_name, l_1_probe) in environment.call(context, environment.getattr(environment.getattr((undefined(name='runtime') if l_0_runtime is missing else l_0_runtime), 'probes'), 'items')):
        _loop_vars = {}
        pass
        yield '      '
        yield str(environment.finalize(context.eval_ctx, l_1_name))
        yield ': '
        yield str(environment.finalize(context.eval_ctx, l_1_probe))
        yield '\n'
    l_1_name = l_1_probe = missing
    if (not t_2(environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'pre_stop'))):
        pass
        yield '      lifecycle:\n        preStop:\n          exec:\n            command: '
        yield str(environment.finalize(context.eval_ctx, environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'pre_stop')))
        yield '\n'
    if environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'volume_mounts'):
        pass
        yield '      volumeMounts:\n'
        for l_1_mount in environment.getattr(environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'container'), 'volume_mounts'):
            _loop_vars = {}
            pass
            yield '        - '
            yield str(environment.finalize(context.eval_ctx, l_1_mount))
            yield '\n'
        l_1_mount = missing
    if environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'volumes'):
        pass
        yield '  volumes:\n'
        for l_1_volume in environment.getattr((undefined(name='pod') if l_0_pod is missing else l_0_pod), 'volumes'):
            _loop_vars = {}
            pass
            yield '    - name: '
            yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_volume, 'name')))
            yield '\n'
            if t_1(environment.getattr(l_1_volume, 'claimName')):
                pass
                yield '      persistentVolumeClaim:\n        claimName: '
                yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_volume, 'claimName')))
                yield '\n'
            elif t_1(environment.getattr(l_1_volume, 'configMap')):
                pass
                yield '      configMap:\n        name: '
                yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_volume, 'configMap')))
                yield '\n'
            elif t_1(environment.getattr(l_1_volume, 'secret')):
                pass
                yield '      secret:\n        secretName: '
                yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_volume, 'secret')))
                yield '\n'
            else:
                pass
                yield '      emptyDir: '
                yield str(environment.finalize(context.eval_ctx, environment.getattr(l_1_volume, 'emptyDir')))
                yield '\n'
        l_1_volume = missing

blocks = {}
debug_info = '5=27&6=29&7=32&10=35&11=37&12=40&14=42&17=45&18=48&20=50&21=53&23=55&24=58&26=60&27=63&29=65&30=68&32=70&38=73&40=75&42=78&43=82&46=85&48=88&49=92&53=96&54=98&55=100&56=103&58=105&59=108&61=110&63=113&64=117&67=120&69=123&70=127&73=130&75=133&76=137&79=142&80=145&82=147&83=151&85=156&89=159&91=161&93=164&94=168&97=171&99=174&100=178&101=180&103=183&104=185&106=188&107=190&109=193&111=198'


# Generated by `python -m pmanifest.generate` from pmanifest/templates/pod.yaml.j2: do not edit.
JINJA2_VERSION = '3.1.6'
SOURCE_FINGERPRINT = '3368:8a83e21c'
