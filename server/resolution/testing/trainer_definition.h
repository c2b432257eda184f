#ifndef WM_SERVER_RESOLUTION_TESTING_TRAINER_DEFINITION_H_
#define WM_SERVER_RESOLUTION_TESTING_TRAINER_DEFINITION_H_

// The partial-answer tests' definition (resolution's and the service's): a
// Trainer with workers and named evaluators. `.spec.evaluators[].name`
// fails ("Cannot iterate over null") on a Trainer without evaluators, as
// upstream's Grove definition does on a PodCliqueSet without scaling
// groups, so its evaluator component fails while the rest resolves.

namespace wm::resolution::testing {

inline constexpr char kTrainerDefinition[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-trainer-v1}
spec:
  structureDefinition:
    rootComponent:
      name: trainer
      kind: {group: example.com, version: v1, kind: Trainer}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: .status.phase, expectedResult: Running}
    childComponents:
    - name: worker
      ownerRef: trainer
      specDefinition: {podTemplateSpecPath: .spec.worker.template}
      scaleDefinition: {replicasPath: .spec.worker.replicas}
      podSelector:
        componentTypeSelector: {matchLabels: {role: worker}}
    - name: evaluator
      ownerRef: trainer
      instanceIdPath: .spec.evaluators[].name
      specDefinition:
        podTemplateSpecPath: .spec.evaluators[].template
      podSelector:
        componentTypeSelector: {matchLabels: {role: evaluator}}
        componentInstanceSelector:
          idPath: .metadata.labels.evaluator
  optimizationInstructions:
    gangScheduling:
      podGroups:
      - name: trainer
        members:
        - componentName: worker
        - componentName: evaluator
)";

}  // namespace wm::resolution::testing

#endif  // WM_SERVER_RESOLUTION_TESTING_TRAINER_DEFINITION_H_
